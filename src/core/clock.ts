/** The time source of the app: injected, so tests and benchmarks control it. */
export type Clock = () => Date
