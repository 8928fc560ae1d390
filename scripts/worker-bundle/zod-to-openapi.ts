// The worker bundle's stand-in for @asteasolutions/zod-to-openapi (scripts/build-worker.ts puts it in place of the
// package). The worker serves the OpenAPI document made at build time from the same routes, so it needs none of the
// generator: @hono/zod-openapi's OpenAPIHono keeps routing and validating as it does on Node (its `openapi(route,
// handler)` registers the route and its zod validators), while what only the document would read is not kept.
// - `.openapi(…)` on a zod schema returns the schema: the metadata it adds (names, descriptions, examples, path
//   parameter names) only ever reaches the document; parsing never reads it.
// - The registry records nothing, so routers mounted in others hand nothing up.
// - The generators throw: nothing in the worker may make the document at run time.

interface Extendable {
  ZodType: { prototype: { openapi?: unknown } }
}

export function extendZodWithOpenApi(zod: Extendable): void {
  if (zod.ZodType.prototype.openapi !== undefined) return
  zod.ZodType.prototype.openapi = function (this: unknown) {
    return this
  }
}

export class OpenAPIRegistry {
  readonly definitions: never[] = []
  register<T>(_refId: string, schema: T): T {
    return schema
  }
  registerParameter<T>(_refId: string, schema: T): T {
    return schema
  }
  registerPath(): void {}
  registerWebhook(): void {}
  registerComponent(): void {}
}

const madeAtBuildTime = (): never => {
  throw new Error('the OpenAPI document of the worker is made at build time (scripts/build-worker.ts): its generator is not in the bundle')
}

export class OpenApiGeneratorV3 {
  constructor() {
    madeAtBuildTime()
  }
}
export class OpenApiGeneratorV31 extends OpenApiGeneratorV3 {}
export class OpenApiGeneratorV32 extends OpenApiGeneratorV3 {}

export const getOpenApiMetadata = (): Record<string, never> => ({})
export const getRefId = (): undefined => undefined
export const zodToOpenAPIRegistry = madeAtBuildTime
