import { createRoute } from '@hono/zod-openapi'
import * as z from '../http/zod.js'
import { sql } from 'drizzle-orm'
import { createRouter, jsonContent } from '../http/openapi.js'
import { loggable } from '../core/errors.js'

const HealthSchema = z.object({ health: z.enum(['GOOD', 'BAD']) }).openapi('healthCheckSchema')

const getHealth = createRoute({
  method: 'get',
  path: '/health',
  operationId: 'getHealth',
  tags: ['Operational'],
  summary: 'Health check',
  description: 'GOOD when the server can query its database; 500 with BAD otherwise. Needs no token.',
  responses: {
    200: { description: 'The server and its database are up', content: jsonContent(HealthSchema) },
    500: { description: 'The database cannot be reached', content: jsonContent(HealthSchema) },
  },
})

export const healthRoutes = createRouter().openapi(getHealth, async (c) => {
  try {
    await c.var.db.execute(sql`select 1`)
    return c.json({ health: 'GOOD' as const }, 200)
  } catch (error) {
    console.error('health check failed:', loggable(error))
    return c.json({ health: 'BAD' as const }, 500)
  }
})
