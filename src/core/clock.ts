/** The time source of the app: injected, so tests and benchmarks control it. */
export type Clock = () => Date

/** The earliest and latest instants Postgres's timestamptz takes that a JavaScript Date can hold (years 1 to 9999). */
const STORABLE = [Date.parse('0001-01-01T00:00:00Z'), Date.parse('9999-12-31T23:59:59.999Z')] as const

/** The time `value` names, in milliseconds, when it is a date a timestamp column can store; undefined otherwise. */
export function storableTime(value: string): number | undefined {
  const time = Date.parse(value)
  return Number.isFinite(time) && time >= STORABLE[0] && time <= STORABLE[1] ? time : undefined
}
