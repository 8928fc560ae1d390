import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts'

export type ExposurePoint = { label: string; yes: number; no: number }

/** Exposures per hour or day as stacked bars (recharts, in a chunk of its own, loaded only when the chart is asked for: flag-metrics.tsx). */
export default function MetricsChart({ points, height }: { points: ExposurePoint[]; height: number }) {
  return (
    <ResponsiveContainer width="100%" height={height}>
      <BarChart data={points} margin={{ top: 8, right: 8, bottom: 0, left: 0 }}>
        <CartesianGrid strokeDasharray="3 3" vertical={false} />
        <XAxis dataKey="label" fontSize={11} interval="preserveStartEnd" minTickGap={16} />
        <YAxis fontSize={11} allowDecimals={false} width={44} />
        <Tooltip />
        <Legend />
        <Bar dataKey="yes" name="exposed (yes)" stackId="e" fill="var(--mantine-color-green-7)" isAnimationActive={false} />
        <Bar dataKey="no" name="not exposed (no)" stackId="e" fill="var(--mantine-color-gray-6)" isAnimationActive={false} />
      </BarChart>
    </ResponsiveContainer>
  )
}
