// Urlencoded scaling benchmark: bodykit's extended parser vs qs.parse on forms of 1k-100k duplicate-key parameters.
// Standalone: `node --import tsx bench/urlencoded-scaling.ts [--full]`; bench/index.ts can call run().
import qs from 'qs'
import { createUrlencodedParse } from '../src/parsers/urlencoded'
import { modern } from '../src/variants'
import type { Context, Row as ReportRow, SectionResult } from './report'
import { NODE_FORMS } from '../src/parsers/node-forms'

/** One timing: milliseconds for one parse of the form; qsMs is null when qs was skipped as too slow. */
export interface Row {
  name: string
  bodykitMs: number
  qsMs: number | null
}

const SIZES = [1_000, 5_000, 20_000, 100_000]

/** The hostile shapes: one key repeated (combined in qs's parseValues) and distinct indices (qs's merge). */
const SHAPES: Record<string, (i: number) => string> = {
  'a[]=': () => 'a[]=',
  'a=x': () => 'a=x',
  'a[b][]=': () => 'a[b][]=',
  'a[i]=x': (i) => `a[${i}]=x`
}

/** Median of `runs` timings of `fn`, in milliseconds. */
function time (fn: () => unknown, runs: number): number {
  const samples: number[] = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    fn()
    samples.push(performance.now() - started)
  }
  return samples.sort((a, b) => a - b)[Math.floor(runs / 2)]
}

/**
 * Times every shape at every size. qs at 100,000 parameters takes minutes per shape, so it runs only with
 * `full` (or `--full` on the command line); otherwise its cell is null.
 */
export async function run (full = process.argv.includes('--full'), shapes = Object.keys(SHAPES), sizes = SIZES): Promise<Row[]> {
  const rows: Row[] = []
  for (const shape of shapes) {
    const make = SHAPES[shape]
    for (const size of sizes) {
      const body = Array.from({ length: size }, (_, i) => make(i)).join('&')
      const parse = createUrlencodedParse({ extended: true, parameterLimit: size }, modern, NODE_FORMS)
      // The options bodykit's extended parser hands to qs for this body.
      const qsOptions = { depth: 32, strictDepth: true, allowPrototypes: true, parameterLimit: size, arrayLimit: Math.max(100, size) }
      parse(body, 'utf-8') // warm-up
      const bodykitMs = time(() => parse(body, 'utf-8'), 5)
      const qsMs = size < 100_000 || full ? time(() => qs.parse(body, qsOptions), size <= 5_000 ? 3 : 1) : null
      rows.push({ name: `${shape} x${size}`, bodykitMs, qsMs })
      await new Promise((resolve) => setImmediate(resolve))
    }
  }
  return rows
}

/**
 * The `forms` section of `npm run bench`: duplicate-key forms up to 20,000 parameters (the bound is
 * 100 ms for 20,000 `a[]=` pairs), bodykit's extended parser against qs itself.
 */
export async function forms (ctx: Context): Promise<SectionResult> {
  const rows: ReportRow[] = []
  for (const { name, bodykitMs, qsMs } of await run(false, ['a[]=', 'a=x'], ctx.quick ? [1_000, 20_000] : [1_000, 5_000, 20_000])) {
    rows.push({ case: name, target: 'qs', baseline: 'qs', ratio: 1, value: qsMs, unit: 'ms' })
    rows.push({ case: name, target: 'bodykit', baseline: 'qs', ratio: qsMs ? bodykitMs / qsMs : null, value: bodykitMs, unit: 'ms' })
    ctx.log(`  ${name}: bodykit ${bodykitMs.toFixed(1)} ms, qs ${qsMs?.toFixed(1)} ms`)
  }
  return {
    id: 'forms',
    title: 'Large urlencoded forms: time per parse ÷ qs.parse with the same options (lower is better)',
    legend: 'Extended mode, parameterLimit raised to the form size; `node --import tsx bench/urlencoded-scaling.ts --full` adds 100,000 and more shapes.',
    rows
  }
}

if (require.main === module) {
  run().then((rows) => {
    const fmt = (ms: number | null): string => ms === null ? 'skipped (--full)' : ms.toFixed(1)
    console.log(['form'.padEnd(18), 'bodykit ms'.padStart(11), 'qs ms'.padStart(17), 'qs/bodykit'.padStart(11)].join(' '))
    for (const { name, bodykitMs, qsMs } of rows) {
      const ratio = qsMs === null ? '' : (qsMs / bodykitMs).toFixed(0) + 'x'
      console.log([name.padEnd(18), fmt(bodykitMs).padStart(11), fmt(qsMs).padStart(17), ratio.padStart(11)].join(' '))
    }
  }, (err: unknown) => {
    console.error(err)
    process.exitCode = 1
  })
}
