export { projectIdParam } from '../http/common-schemas.js'
export { featurePathParams } from '../flags/schemas.js'
