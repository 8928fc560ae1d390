import * as z from '../http/zod.js'

export const FrontendToggleSchema = z
  .object({
    name: z.string(),
    enabled: z.boolean(),
    variant: z.object({
      name: z.string(),
      enabled: z.boolean(),
      payload: z.object({ type: z.string(), value: z.string() }).optional(),
      feature_enabled: z.boolean(),
      featureEnabled: z.boolean().openapi({ deprecated: true }),
    }),
    impressionData: z.boolean(),
  })
  .openapi('frontendApiFeatureSchema')

export const FrontendTogglesSchema = z.object({ toggles: z.array(FrontendToggleSchema) }).openapi('frontendApiFeaturesSchema')

const contextValue = z.union([z.string(), z.number(), z.boolean()])

/** The context as the frontend SDK sends it in a POST; other fields are accepted and become properties. */
export const FrontendContextSchema = z
  .object({
    appName: z.string().optional(),
    userId: z.string().optional(),
    sessionId: z.string().optional(),
    remoteAddress: z.string().optional(),
    currentTime: z.string().optional(),
    environment: z.string().optional().openapi({ deprecated: true, description: 'Ignored: the token names the environment' }),
    properties: z.record(z.string(), contextValue.nullable()).optional(),
  })
  .catchall(z.unknown())

export const FrontendPostSchema = z
  .object({ context: FrontendContextSchema.optional() })
  .catchall(z.unknown())
  .openapi('frontendApiFeaturesPostSchema')

const queryValue = z.union([z.string(), z.array(z.string())])

export const FrontendQuerySchema = z
  .object({
    appName: queryValue.optional(),
    userId: queryValue.optional(),
    sessionId: queryValue.optional().openapi({ description: 'Default: a random one, as Unleash does' }),
    remoteAddress: queryValue.optional().openapi({ description: 'Default: the caller’s address' }),
    currentTime: queryValue.optional(),
  })
  .catchall(queryValue)
  .openapi({ description: 'Context fields; `properties[name]=value` for properties, and any other parameter becomes a property too' })
