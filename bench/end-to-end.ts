// End-to-end section: a node:http server per target in a child process, loaded by autocannon over 127.0.0.1; req/s and server CPU per request.
import autocannon from 'autocannon'
import { form60, json69, type Case } from './cases'
import { median, type Context, type Row, type SectionResult } from './report'
import { startWorker, type Worker } from './spawn'
import type { Target } from './targets'

const routes: { path: string, c: Case }[] = [{ path: '/json', c: json69 }, { path: '/urlencoded', c: form60 }]

const CONNECTIONS = 10

interface Run { rps: number, cpu: number, busy: number, failed: number }
interface Server { target: Target, worker: Worker, port: number }

function load (server: Server, c: Case, path: string, duration: number): Promise<autocannon.Result> {
  return autocannon({
    url: `http://127.0.0.1:${server.port}${path}`,
    method: 'POST',
    headers: c.headers,
    body: c.body,
    connections: CONNECTIONS,
    duration
  })
}

/** One measured run: req/s seen by the client, CPU µs per request spent by the server. */
async function measure (server: Server, c: Case, path: string, duration: number): Promise<Run> {
  const started = server.worker.next('started')
  server.worker.send({ cmd: 'start' })
  await started
  const result = await load(server, c, path, duration)
  const stopped = server.worker.next('stopped')
  server.worker.send({ cmd: 'stop' })
  const { cpuMicros, requests } = await stopped
  return { rps: result['2xx'] / result.duration, cpu: cpuMicros / requests, busy: cpuMicros / 1e6 / result.duration, failed: result.non2xx + result.errors + result.timeouts }
}

async function check (server: Server, c: Case, path: string): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${server.port}${path}`, {
    method: 'POST', headers: { ...c.headers, 'x-echo': '1' }, body: c.body, signal: AbortSignal.timeout(5000)
  })
  return res.status + ' ' + await res.text()
}

export async function endToEnd (ctx: Context): Promise<SectionResult> {
  // Short passes, many of them: the load on a shared machine drifts, and interleaving pairs each target with its baseline.
  const duration = ctx.quick ? 1 : 1.5
  const passes = ctx.quick ? 1 : 3
  const servers: Server[] = []
  const rows: Row[] = []
  try {
    const workers = ctx.targets.map((target) => ({ target, worker: startWorker(['server', target.id]) }))
    for (const { target, worker } of workers) {
      try {
        servers.push({ target, worker, port: (await worker.next('listening')).port })
      } catch (err) {
        ctx.log(`  ${target.id}: server did not start: ${String((err as Error).message).split('\n')[0]}`)
        rows.push({ case: 'server start', target: target.id, baseline: target.baseline, ratio: null, value: null, unit: '', note: 'no server' })
      }
    }

    if (servers[0]?.target.id !== ctx.targets[0].id) throw new Error(`no ${ctx.targets[0].id} server to compare with`)
    for (const { path, c } of routes) {
      // Same parsed body from every server (as JSON), then a warm-up so JIT state does not favour later targets.
      const expected = await check(servers[0], c, path)
      const active: Server[] = []
      for (const s of servers) {
        const got = await check(s, c, path)
        if (got === expected) active.push(s)
        else rows.push({ case: `${c.name}: req/s`, target: s.target.id, baseline: s.target.baseline, ratio: null, value: null, unit: 'req/s', note: 'body differs' })
        if (got !== expected) ctx.log(`  ${c.name}: ${s.target.id} skipped, replied ${got.slice(0, 60)} instead of ${expected.slice(0, 60)}`)
        else await load(s, c, path, 0.5)
      }
      const runs = new Map<string, Run[]>(active.map((s) => [s.target.id, []]))
      for (let pass = 0; pass < passes; pass++) {
        for (let i = 0; i < active.length; i++) {
          const s = active[(i + pass) % active.length]
          const run = await measure(s, c, path, duration)
          runs.get(s.target.id)?.push(run)
          ctx.log(`  ${c.name} pass ${pass + 1}: ${s.target.id} ${Math.round(run.rps)} req/s, ${run.cpu.toFixed(1)} µs CPU/req, server busy ${(run.busy * 100).toFixed(0)}%`)
        }
      }
      for (const s of active) {
        const mine = runs.get(s.target.id) ?? []
        const busy = median(mine.map((r) => r.busy))
        const base = runs.get(s.target.baseline)
        if (!base) {
          rows.push({ case: `${c.name}: req/s`, target: s.target.id, baseline: s.target.baseline, ratio: null, value: null, unit: 'req/s', note: 'no baseline' })
          continue
        }
        const failed = mine.reduce((n, r) => n + r.failed, 0)
        const note = failed ? `${failed} failed requests` : undefined
        rows.push({
          case: `${c.name}: req/s`, target: s.target.id, baseline: s.target.baseline, note, unit: 'req/s', extra: { serverBusy: busy },
          ratio: median(mine.map((r, i) => r.rps / base[i].rps)), value: median(mine.map((r) => r.rps))
        })
        rows.push({
          case: `${c.name}: server CPU/req`, target: s.target.id, baseline: s.target.baseline, note, unit: 'µs',
          ratio: median(mine.map((r, i) => r.cpu / base[i].cpu)), value: median(mine.map((r) => r.cpu))
        })
      }
    }
  } finally {
    for (const s of servers) s.worker.kill()
  }
  return {
    id: 'end-to-end',
    title: `End-to-end: node:http server per target, autocannon 10 connections × ${duration} s × ${passes} pass(es) (req/s: higher is better; CPU/req: lower is better)`,
    legend: 'Each server runs in its own child process on 127.0.0.1; autocannon runs in the parent; passes are interleaved across targets.',
    rows
  }
}
