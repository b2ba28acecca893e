// Benchmark runner (`npm run bench [-- --only in-process,memory] [--quick]`): runs the sections, prints tables, writes bench/results/ (JSON, Markdown tables, SVG chart).
import { mkdirSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { chunking } from './chunking'
import { clients } from './clients'
import { endToEnd } from './end-to-end'
import { footprint } from './footprint'
import { hostile } from './hostile'
import { http2Section } from './http2'
import { inProcess } from './in-process'
import { koa } from './koa'
import { loopBlock } from './loop-block'
import { memory } from './memory'
import { multipartSection } from './multipart'
import { bodykitOptions } from './options'
import { schema } from './schema'
import { forms } from './urlencoded-scaling'
import { h3Section } from './h3'
import { web } from './web'
import { writeChart } from './chart'
import { markdownTable, textTable, toGrid, type BenchFile, type Context, type Section, type SectionResult } from './report'
import { loadTargets } from './targets'

/** In run order. A later section (e.g. hostile inputs) only needs an entry here. */
const sections: Record<string, Section> = {
  'in-process': inProcess,
  'loop-block': loopBlock,
  'end-to-end': endToEnd,
  memory,
  hostile,
  forms,
  options: bodykitOptions,
  schema,
  clients,
  http2: http2Section,
  multipart: multipartSection,
  chunking,
  web,
  koa,
  h3: h3Section,
  footprint
}

function parseArgs (argv: string[]): { only: string[], quick: boolean } {
  const only: string[] = []
  let quick = false
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--quick') quick = true
    else if (arg === '--only') only.push(...(argv[++i] ?? '').split(','))
    else if (arg.startsWith('--only=')) only.push(...arg.slice(7).split(','))
    else throw new Error(`unknown argument ${arg} (use --only ${Object.keys(sections).join(',')} and/or --quick)`)
  }
  for (const name of only) if (!sections[name]) throw new Error(`unknown section ${name}: one of ${Object.keys(sections).join(', ')}`)
  return { only, quick }
}

function machine (): Record<string, string | number> {
  const cpus = os.cpus()
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version
  }
}

async function main (): Promise<void> {
  let args: ReturnType<typeof parseArgs>
  try {
    args = parseArgs(process.argv.slice(2))
  } catch (err) {
    console.error((err as Error).message)
    process.exitCode = 2
    return
  }
  const { only, quick } = args
  const started = Date.now()
  const command = 'npm run bench' + (process.argv.length > 2 ? ' -- ' + process.argv.slice(2).join(' ') : '')
  const targets = loadTargets((msg) => console.log('note: ' + msg))
  const log = (msg: string): void => console.log(msg)
  const ctx: Context = { quick, targets, log }
  console.log(`targets: ${targets.map((t) => `${t.id} (${t.source})`).join(', ')}`)

  const results: (SectionResult & { seconds: number })[] = []
  for (const [name, section] of Object.entries(sections)) {
    if (only.length && !only.includes(name)) continue
    console.log(`\n== ${name}`)
    const t0 = Date.now()
    try {
      const result = await section(ctx)
      results.push({ ...result, seconds: (Date.now() - t0) / 1000 })
      console.log(`\n${result.title}\n${textTable(toGrid(result))}`)
    } catch (err) {
      // One broken section should not cost the others' figures; the run still fails at the end.
      console.error(`section ${name} failed:`, err)
      process.exitCode = 1
    }
  }

  const seconds = (Date.now() - started) / 1000
  const info = machine()
  const date = new Date().toISOString()
  const dir = join(__dirname, 'results')
  mkdirSync(dir, { recursive: true })
  const file: BenchFile = {
    date, command, quick, seconds, machine: info,
    targets: targets.map((t) => ({ id: t.id, baseline: t.baseline, source: t.source })),
    sections: results
  }
  writeFileSync(join(dir, 'latest.json'), JSON.stringify(file, null, 2) + '\n')
  writeFileSync(join(dir, 'latest.md'), [
    `Run ${date.slice(0, 10)} with \`${command}\` (${seconds.toFixed(0)} s) on ${info.cpu}, ${info.cores} cores, ${info.memoryGiB} GiB, ${info.os}, Node ${info.node}.`,
    'Each cell is the target ÷ its baseline (body-parser 2.x, or 1.x for `bodykit/legacy`), with its absolute figure in brackets; absolute figures drift on a shared machine, ratios are paired and do not.',
    ...results.flatMap((r) => ['', `**${r.title}**`, '', r.legend, '', markdownTable(toGrid(r))])
  ].join('\n') + '\n')
  // The chart is drawn from the file just written, as `node --import tsx bench/chart.ts` draws it from a stored one.
  const chart = writeChart(join(dir, 'latest.json'), file)
  console.log(`\nwrote bench/results/latest.json, latest.md${chart === null ? ' (no in-process section: no chart)' : ' and latest.svg'} in ${seconds.toFixed(0)} s total`)
}

main().catch((err: unknown) => {
  console.error(err)
  process.exitCode = 1
})
