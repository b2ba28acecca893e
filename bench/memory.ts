// Memory section: in a fresh child per target, peak RSS and heap growth while 50 concurrent 1 MiB JSON bodies are read.
import { json1m } from './cases'
import { median, type Context, type Row, type SectionResult } from './report'
import { startWorker } from './spawn'

const CONCURRENCY = 50
const MiB = 2 ** 20

export async function memory (ctx: Context): Promise<SectionResult> {
  const reps = ctx.quick ? 1 : 2
  const samples = new Map<string, { rss: number, heap: number }[]>(ctx.targets.map((t) => [t.id, []]))
  const notes = new Map<string, string>()
  for (let rep = 0; rep < reps; rep++) {
    for (let i = 0; i < ctx.targets.length; i++) {
      const target = ctx.targets[(i + rep) % ctx.targets.length]
      if (notes.has(target.id)) continue
      const worker = startWorker(['memory', target.id, String(CONCURRENCY)], ['--expose-gc'])
      try {
        const m = await worker.next('memory')
        samples.get(target.id)?.push({ rss: m.rssBytes, heap: m.heapBytes })
      } catch (err) {
        notes.set(target.id, 'error')
        ctx.log(`  ${target.id} failed: ${String((err as Error).message).split('\n')[0]}`)
      } finally {
        worker.kill()
      }
    }
  }
  const rows: Row[] = []
  for (const metric of ['rss', 'heap'] as const) {
    for (const target of ctx.targets) {
      const mine = (samples.get(target.id) ?? []).map((s) => s[metric])
      const base = (samples.get(target.baseline) ?? []).map((s) => s[metric])
      const ok = mine.length && base.length
      rows.push({
        case: metric === 'rss' ? 'peak RSS growth' : 'peak heap growth',
        target: target.id,
        baseline: target.baseline,
        ratio: ok ? median(mine) / median(base) : null,
        value: mine.length ? median(mine) / MiB : null,
        unit: 'MiB',
        note: notes.get(target.id) ?? (ok ? undefined : 'no baseline')
      })
    }
  }
  return {
    id: 'memory',
    title: `Memory: ${CONCURRENCY} concurrent ${json1m.name.replace("json ", "")} JSON requests, growth over the idle process ÷ baseline (lower is better; median of ${reps})`,
    legend: 'Fresh child process per target and repetition; chunk i of every request is pushed before chunk i + 1 of any, all bodies parsed and kept.',
    rows
  }
}
