// The performance chart: the in-process section of a bench result as a plain SVG bar chart (ratio to body-parser per case).
// `npm run bench` calls writeChart after writing latest.json; `node --import tsx bench/chart.ts [file.json]` redraws it from a stored run.
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { geomean, type BenchFile, type SectionResult } from './report'

/** The bars of each group, in order: bodykit next to the floor, each against its own baseline. */
const SERIES = [
  { target: 'bodykit', label: 'bodykit ÷ body-parser 2', color: '#1f6feb' },
  { target: 'bodykit/legacy', label: 'bodykit/legacy ÷ body-parser 1', color: '#79b8ff' },
  { target: 'floor', label: 'floor (no checks) ÷ body-parser 2', color: '#8b949e' }
]

const WIDTH = 820
const LABEL_WIDTH = 190
const PLOT_LEFT = LABEL_WIDTH + 10
const PLOT_RIGHT = WIDTH - 90
const BAR = 10
const BAR_GAP = 2
const GROUP_GAP = 12
const TOP = 104
const FONT = 'font-family="-apple-system, Segoe UI, Helvetica, Arial, sans-serif"'

function escapeXml (text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')
}

/** One group per case (plus the geometric mean): the ratio of each series, or the reason it has none. */
interface Group { name: string, bars: { ratio: number | null, note?: string }[] }

function groupsOf (section: SectionResult): Group[] {
  const cases = [...new Set(section.rows.map((row) => row.case))]
  const groups: Group[] = cases.map((name) => ({
    name,
    bars: SERIES.map(({ target }) => {
      const row = section.rows.find((r) => r.case === name && r.target === target)
      return { ratio: row?.ratio ?? null, note: row?.note }
    })
  }))
  groups.push({
    name: 'geometric mean',
    bars: SERIES.map(({ target }) => {
      const ratios = section.rows.filter((r) => r.target === target && r.ratio !== null).map((r) => r.ratio as number)
      return { ratio: ratios.length > 0 ? geomean(ratios) : null }
    })
  })
  return groups
}

/** The chart as SVG text, or null when the run has no in-process section (e.g. `--only memory`). */
export function renderChart (file: BenchFile): string | null {
  const section = file.sections.find((s) => s.id === 'in-process')
  if (!section) return null
  const groups = groupsOf(section)
  const ratios = groups.flatMap((g) => g.bars.map((b) => b.ratio ?? 0))
  // Round the axis up to the next 0.25 past both the largest bar and 1.00, body-parser's mark.
  const max = Math.ceil(Math.max(1.05, ...ratios) * 4) / 4
  const x = (ratio: number): number => PLOT_LEFT + (PLOT_RIGHT - PLOT_LEFT) * ratio / max
  const groupHeight = SERIES.length * (BAR + BAR_GAP) - BAR_GAP + GROUP_GAP
  const plotBottom = TOP + groups.length * groupHeight
  const height = plotBottom + 34
  const { machine } = file
  const subtitle = `Run ${file.date.slice(0, 10)} (${file.command}) on ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}. Median of per-round ratios; lower is faster.`
  const title = 'Time per request, ratio to body-parser (1.00 = as fast as body-parser)'

  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="chart-title">`,
    `<title id="chart-title">${escapeXml(title)}</title>`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<g ${FONT} fill="#1f2328">`,
    `<text x="10" y="24" font-size="16" font-weight="600">${escapeXml(title)}</text>`,
    `<text x="10" y="44" font-size="11" fill="#57606a">${escapeXml(subtitle)}</text>`
  ]
  SERIES.forEach((series, i) => {
    const left = 10 + i * 250
    out.push(`<rect x="${left}" y="58" width="12" height="12" fill="${series.color}"/>`,
      `<text x="${left + 18}" y="68" font-size="12">${escapeXml(series.label)}</text>`)
  })
  for (let tick = 0; tick <= max + 1e-9; tick += 0.25) {
    const tx = x(tick).toFixed(1)
    out.push(`<line x1="${tx}" y1="${TOP - 8}" x2="${tx}" y2="${plotBottom}" stroke="#eaeef2"/>`,
      `<text x="${tx}" y="${plotBottom + 14}" font-size="10" fill="#57606a" text-anchor="middle">${tick.toFixed(2)}</text>`)
  }
  // body-parser's mark goes under the bars, so that a value label next to 1.00 stays readable.
  const one = x(1).toFixed(1)
  out.push(`<line x1="${one}" y1="${TOP - 8}" x2="${one}" y2="${plotBottom}" stroke="#cf222e" stroke-width="1.5" stroke-dasharray="4 3"/>`,
    `<text x="${one}" y="${TOP - 11}" font-size="11" fill="#cf222e" text-anchor="middle">body-parser</text>`)
  groups.forEach((group, g) => {
    const top = TOP + g * groupHeight
    const bold = group.name === 'geometric mean' ? ' font-weight="600"' : ''
    out.push(`<text x="${LABEL_WIDTH}" y="${top + (groupHeight - GROUP_GAP) / 2 + 4}" font-size="12" text-anchor="end"${bold}>${escapeXml(group.name)}</text>`)
    group.bars.forEach((bar, b) => {
      const y = top + b * (BAR + BAR_GAP)
      if (bar.ratio === null) {
        const why = bar.note ? bar.note.replace(/^error: /, '') : 'not run'
        out.push(`<text x="${PLOT_LEFT + 4}" y="${y + BAR - 1}" font-size="10" fill="#57606a">${escapeXml(SERIES[b].target + ': n/a, ' + why)}</text>`)
        return
      }
      const right = x(bar.ratio)
      out.push(`<rect x="${PLOT_LEFT}" y="${y}" width="${(right - PLOT_LEFT).toFixed(1)}" height="${BAR}" fill="${SERIES[b].color}"/>`,
        `<text x="${(right + 4).toFixed(1)}" y="${y + BAR - 1}" font-size="10" fill="#57606a" stroke="#ffffff" stroke-width="3" paint-order="stroke">${bar.ratio.toFixed(2)}</text>`)
    })
  })
  out.push(    `<text x="${((PLOT_LEFT + PLOT_RIGHT) / 2).toFixed(1)}" y="${plotBottom + 28}" font-size="11" fill="#57606a" text-anchor="middle">time per request ÷ body-parser's (2.4.0, or 1.20.6 for bodykit/legacy)</text>`,
    '</g>',
    '</svg>')
  return out.join('\n') + '\n'
}

/** Writes `latest.svg` beside the JSON it is drawn from; returns its path, or null when there was nothing to draw. */
export function writeChart (jsonFile: string, file: BenchFile): string | null {
  const svg = renderChart(file)
  if (svg === null) return null
  const target = join(dirname(jsonFile), 'latest.svg')
  writeFileSync(target, svg)
  return target
}

if (require.main === module) {
  const jsonFile = process.argv[2] ?? join(__dirname, 'results', 'latest.json')
  const written = writeChart(jsonFile, JSON.parse(readFileSync(jsonFile, 'utf8')) as BenchFile)
  console.log(written === null ? `${jsonFile} has no in-process section: no chart written` : `wrote ${written}`)
}
