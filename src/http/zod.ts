// zod, as every schema of the app imports it: `import * as z from '../http/zod.js'`.
// - @hono/zod-openapi is imported first: it adds `.openapi(…)` to zod's schemas, which schema modules call as they load.
// - A namespace import lets the worker's bundler keep only the parts of zod the app uses; zod's `z` object (which
//   @hono/zod-openapi re-exports) is one value holding all of zod, so importing it keeps every part.
import '@hono/zod-openapi'
export * from 'zod'
