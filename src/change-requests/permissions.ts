import { Permission } from '../core/permissions.js'

// Stand-ins until the permission list has APPROVE_CHANGE_REQUEST and APPLY_CHANGE_REQUEST (as Unleash).
export const REVIEW_PERMISSION = Permission.UPDATE_FEATURE_ENVIRONMENT
/** Applying, and scheduling (a schedule applies with its author's access, checked again when it runs). */
export const APPLY_PERMISSION = Permission.UPDATE_FEATURE_ENVIRONMENT
