// In-process section: every target parses the same fake requests, interleaved in rounds; median of per-round time ratios.
import { isDeepStrictEqual } from 'node:util'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { cases, chunksOf, makeRequest, run, type Case } from './cases'
import { median, medianSpread, quantile, type Context, type Row, type SectionResult } from './report'
import type { Middleware, Target } from './targets'

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

/** Requests are built before the clock starts; this caps how many are held at once. */
const MAX_BATCH = 4000
/** From this body size, collect garbage before each batch so no target pays for another's 1 MiB buffers. */
const GC_FROM_BYTES = 512 * 1024

/** Mean milliseconds per request over `n` fresh requests parsed one after the other. */
async function batch (mw: Middleware, c: Case, chunks: Buffer[], n: number, collect = false): Promise<number> {
  const reqs = Array.from({ length: n }, () => makeRequest(c))
  // Not for small bodies: a forced full GC makes the next few thousand tiny requests several times slower.
  if (collect) gc()
  const start = performance.now()
  for (const req of reqs) await run(mw, req, chunks)
  return (performance.now() - start) / n
}

/** Rejects after `ms`, so a middleware that never calls next() is reported instead of hanging the run. */
function timeout (ms: number): Promise<never> {
  return new Promise((_resolve, reject) => setTimeout(() => reject(new Error('next() not called')), ms).unref())
}

function shuffle<T> (items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1))
    ;[items[i], items[j]] = [items[j], items[i]]
  }
  return items
}

/** `req.body` must match the baseline's before any timing: strictly for drop-in targets, as JSON for the others. */
function sameBody (a: unknown, b: unknown, exact: boolean): boolean {
  if (exact || Buffer.isBuffer(a)) return isDeepStrictEqual(a, b)
  return JSON.stringify(a) === JSON.stringify(b)
}

/** Times one case on every target; each target's ratio is against its own baseline target. */
async function benchCase (c: Case, targets: Target[], ctx: Context): Promise<Row[]> {
  const chunks = chunksOf(c.body)
  const rows: Row[] = []
  const bodies = new Map<string, unknown>()
  const live: { target: Target, mw: Middleware, n: number, times: number[] }[] = []
  const heavy = c.body.length >= GC_FROM_BYTES
  for (const target of targets) {
    const row: Row = { case: c.name, target: target.id, baseline: target.baseline, ratio: null, value: null, unit: 'op/s' }
    rows.push(row)
    try {
      const mw = target.parsers[c.parser](c.options)
      const body = await Promise.race([run(mw, makeRequest(c), chunks), timeout(5000)])
      bodies.set(target.id, body)
      if (!bodies.has(target.baseline)) row.note = 'no baseline'
      else if (!sameBody(body, bodies.get(target.baseline), target.exact)) row.note = 'body differs'
      else live.push({ target, mw, n: 1, times: [] })
    } catch (err) {
      row.note = 'error: ' + String((err as Error).message ?? err).slice(0, 40)
    }
    if (row.note) ctx.log(`  ${c.name}: ${target.id} skipped (${row.note})`)
  }

  // Warm up, and size each target's batch to take about batchMs.
  const batchMs = (ctx.quick ? 4 : 5) * (heavy ? 2 : 1)
  const warmMs = ctx.quick ? 60 : 150
  for (const t of live) {
    let count = 0
    const start = performance.now()
    while (performance.now() - start < warmMs) {
      await batch(t.mw, c, chunks, Math.max(1, count))
      count = count * 2 || 1
    }
    const perOp = await batch(t.mw, c, chunks, Math.max(1, count >> 1))
    t.n = Math.min(MAX_BATCH, Math.max(1, Math.round(batchMs / perOp)))
  }

  // Rounds: each runs every target once, in a fresh random order (so no target always follows the same one),
  // until the time budget is spent. Big bodies are the noisiest (allocation and GC bursts): they get twice the time.
  const budgetMs = (ctx.quick ? 800 : 1700) * (heavy ? 2 : 1)
  const minRounds = ctx.quick ? 5 : 11
  const start = performance.now()
  for (let r = 0; r < minRounds || (r < 400 && performance.now() - start < budgetMs); r++) {
    for (const t of shuffle([...live])) t.times.push(await batch(t.mw, c, chunks, t.n, heavy))
  }

  for (const t of live) {
    const base = live.find((b) => b.target.id === t.target.baseline)
    const row = rows.find((r) => r.target === t.target.id) as Row
    row.value = 1000 / median(t.times)
    const ratios = base ? t.times.map((time, r) => time / base.times[r]) : []
    if (base && base !== t) {
      row.ratio = median(ratios)
      row.spread = medianSpread(ratios)
      row.extra = { rounds: ratios.length, q25: quantile(ratios, 0.25), q75: quantile(ratios, 0.75) }
    } else if (base) row.ratio = 1
    else row.note = 'baseline failed'
  }
  return rows
}

/** Benchmarks each case against the targets in turn, logging how long each took. */
export async function benchCases (selected: readonly Case[], targets: Target[], ctx: Context): Promise<Row[]> {
  const rows: Row[] = []
  for (const c of selected) {
    const started = performance.now()
    rows.push(...await benchCase(c, targets, ctx))
    ctx.log(`  ${c.name}: ${((performance.now() - started) / 1000).toFixed(1)} s`)
  }
  return rows
}

export async function inProcess (ctx: Context): Promise<SectionResult> {
  const rows = await benchCases(cases, ctx.targets, ctx)
  return {
    id: 'in-process',
    title: 'In-process: time per request ÷ baseline (lower is faster; median of per-round ratios ±95% interval, ops/s in brackets)',
    legend: 'Real http.IncomingMessage on a fake socket, body pushed in 64 KiB chunks, middleware awaited; every round runs each target once, in a random order.',
    geomean: true,
    rows
  }
}
