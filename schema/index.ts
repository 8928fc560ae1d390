export * from './environments.js'
export * from './projects.js'
export * from './access.js'
export * from './events.js'
