// Result types shared by the sections, small statistics helpers, and the text / markdown table renderers.
import type { Target } from './targets'

export interface Row {
  /** Table row label, e.g. "json 69 B" or "json 69 B: req/s". */
  case: string
  target: string
  baseline: string
  /** target ÷ baseline of the section's metric; null when the target could not run the case. */
  ratio: number | null
  /** Half-width of a ~95% confidence interval on the ratio, where the section can tell. */
  spread?: number
  /** The target's own absolute figure (drifts between runs; ratios are what to compare). */
  value: number | null
  unit: string
  /** Why the ratio is missing, or anything else worth a footnote. */
  note?: string
  /** More figures for the JSON file only. */
  extra?: Record<string, number>
}

export interface SectionResult {
  id: string
  title: string
  /** One line under the title saying what the ratio means. */
  legend: string
  /** Add a geometric-mean row over the cases. */
  geomean?: boolean
  rows: Row[]
}

/** What `npm run bench` writes to bench/results/latest.json; the tables and the chart are drawn from it. */
export interface BenchFile {
  date: string
  command: string
  quick: boolean
  seconds: number
  machine: Record<string, string | number>
  targets: { id: string, baseline: string, source: string }[]
  sections: (SectionResult & { seconds: number })[]
}

export interface Context {
  quick: boolean
  targets: Target[]
  log: (msg: string) => void
}

export type Section = (ctx: Context) => Promise<SectionResult>

export function median (values: number[]): number {
  const s = [...values].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

export function quantile (values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b)
  const pos = (s.length - 1) * q
  const lo = Math.floor(pos)
  return s[lo] + (s[Math.min(lo + 1, s.length - 1)] - s[lo]) * (pos - lo)
}

/** ~95% confidence half-width of a median, from the interquartile range (normal approximation). */
export function medianSpread (values: number[]): number {
  const sigma = (quantile(values, 0.75) - quantile(values, 0.25)) / 1.349
  return 1.96 * 1.2533 * sigma / Math.sqrt(values.length)
}

export function geomean (values: number[]): number {
  return Math.exp(values.reduce((sum, v) => sum + Math.log(v), 0) / values.length)
}

function human (value: number, unit: string): string {
  const abs = Math.abs(value)
  const scaled = abs >= 1e6 ? (value / 1e6).toFixed(2) + 'M' : abs >= 1e4 ? (value / 1e3).toFixed(1) + 'k' : abs >= 100 ? value.toFixed(0) : value.toPrecision(3)
  return scaled + ' ' + unit
}

/** One table per section: a row per case, a column per target, cells "ratio (absolute)". */
export function toGrid (section: SectionResult): string[][] {
  const targets = [...new Set(section.rows.map((r) => r.target))]
  const cases = [...new Set(section.rows.map((r) => r.case))]
  const header = ['case', ...targets.map((t) => {
    const base = section.rows.find((r) => r.target === t)?.baseline
    return base === t ? t : `${t} ÷ ${base}`
  })]
  const grid = [header]
  for (const c of cases) {
    grid.push([c, ...targets.map((t) => {
      const row = section.rows.find((r) => r.case === c && r.target === t)
      if (!row) return ''
      if (row.ratio === null) return row.note ?? 'n/a'
      const spread = row.spread === undefined ? '' : ' ±' + row.spread.toFixed(2)
      return row.ratio.toFixed(2) + spread + (row.value === null ? '' : ` (${human(row.value, row.unit)})`)
    })])
  }
  if (section.geomean) {
    grid.push(['geometric mean', ...targets.map((t) => {
      const ratios = section.rows.filter((r) => r.target === t && r.ratio !== null).map((r) => r.ratio as number)
      return ratios.length ? geomean(ratios).toFixed(2) : ''
    })])
  }
  return grid
}

export function textTable (grid: string[][]): string {
  const widths = grid[0].map((_, i) => Math.max(...grid.map((row) => row[i].length)))
  const line = (row: string[]): string => row.map((cell, i) => i ? cell.padStart(widths[i]) : cell.padEnd(widths[i])).join('  ')
  return [line(grid[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...grid.slice(1).map(line)].join('\n')
}

export function markdownTable (grid: string[][]): string {
  const line = (row: string[]): string => '| ' + row.join(' | ') + ' |'
  return [line(grid[0]), '|' + grid[0].map((_, i) => i ? ' ---: |' : ' --- |').join(''), ...grid.slice(1).map(line)].join('\n')
}
