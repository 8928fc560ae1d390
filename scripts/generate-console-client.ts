// Writes console/src/api/schema.d.ts, the types of the console's API client (run after changing a route).
import { writeFile } from 'node:fs/promises'
import { CONSOLE_SCHEMA_PATH, generateConsoleClientTypes } from './console-client.js'

await writeFile(CONSOLE_SCHEMA_PATH, await generateConsoleClientTypes())
console.log(`wrote ${CONSOLE_SCHEMA_PATH.pathname}`)
