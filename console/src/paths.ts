export const projectPath = (projectId: string) => `/projects/${encodeURIComponent(projectId)}`
export const flagPath = (projectId: string, flagName: string) => `${projectPath(projectId)}/flags/${encodeURIComponent(flagName)}`
