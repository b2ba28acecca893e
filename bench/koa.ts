// Koa section: a Koa app per target in a child process (koa-bodyparser 4, and bodykit/koa in its place), loaded by
// autocannon over 127.0.0.1 with JSON and form bodies; req/s and server CPU per request, bodykit/koa ÷ koa-bodyparser.
import autocannon from 'autocannon'
import { form60, json69, type Case } from './cases'
import { KOA_TARGETS } from './koa-server'
import { median, type Context, type Row, type SectionResult } from './report'
import { startWorker, type Worker } from './spawn'

const BASELINE = 'koa-bodyparser'
const CASES: Case[] = [json69, form60]
const CONNECTIONS = 10

interface Server { target: string, worker: Worker, port: number }
interface Run { rps: number, cpu: number, failed: number }

function load (server: Server, c: Case, duration: number): Promise<autocannon.Result> {
  return autocannon({ url: `http://127.0.0.1:${server.port}/`, method: 'POST', headers: c.headers, body: c.body, connections: CONNECTIONS, duration })
}

/** One measured run: req/s seen by the client, CPU µs per request spent by the server. */
async function measure (server: Server, c: Case, duration: number): Promise<Run> {
  const started = server.worker.next('started')
  server.worker.send({ cmd: 'start' })
  await started
  const result = await load(server, c, duration)
  const stopped = server.worker.next('stopped')
  server.worker.send({ cmd: 'stop' })
  const { cpuMicros, requests } = await stopped
  return { rps: result['2xx'] / result.duration, cpu: cpuMicros / requests, failed: result.non2xx + result.errors + result.timeouts }
}

/** The parsed body a server echoes, so that both are known to read the same thing before they are timed. */
async function echo (server: Server, c: Case): Promise<string> {
  const res = await fetch(`http://127.0.0.1:${server.port}/`, { method: 'POST', headers: { ...c.headers, 'x-echo': '1' }, body: c.body, signal: AbortSignal.timeout(5000) })
  return res.status + ' ' + await res.text()
}

export async function koa (ctx: Context): Promise<SectionResult> {
  // Short passes, interleaved: the load on a shared machine drifts, and alternating pairs each run with the baseline's.
  const duration = ctx.quick ? 1 : 2
  const passes = ctx.quick ? 2 : 5
  const servers: Server[] = []
  const rows: Row[] = []
  try {
    for (const target of KOA_TARGETS) {
      const worker = startWorker(['koa', target])
      servers.push({ target, worker, port: (await worker.next('listening')).port })
    }
    for (const c of CASES) {
      const answers = await Promise.all(servers.map((server) => echo(server, c)))
      if (new Set(answers).size !== 1) throw new Error(`${c.name}: the servers read different bodies: ${answers.join(' | ')}`)
      for (const server of servers) await load(server, c, 0.5)
      const runs = new Map<string, Run[]>(servers.map((server) => [server.target, []]))
      for (let pass = 0; pass < passes; pass++) {
        for (let i = 0; i < servers.length; i++) {
          const server = servers[(i + pass) % servers.length]
          const run = await measure(server, c, duration)
          runs.get(server.target)?.push(run)
          ctx.log(`  ${c.name} pass ${pass + 1}: ${server.target} ${Math.round(run.rps)} req/s, ${run.cpu.toFixed(1)} µs CPU/req`)
        }
      }
      const base = runs.get(BASELINE) as Run[]
      for (const server of servers) {
        const mine = runs.get(server.target) as Run[]
        const failed = mine.reduce((n, run) => n + run.failed, 0)
        const note = failed ? `${failed} failed requests` : undefined
        rows.push({ case: `${c.name}: req/s`, target: server.target, baseline: BASELINE, unit: 'req/s', note, ratio: median(mine.map((run, i) => run.rps / base[i].rps)), value: median(mine.map((run) => run.rps)) })
        rows.push({ case: `${c.name}: server CPU/req`, target: server.target, baseline: BASELINE, unit: 'µs', note, ratio: median(mine.map((run, i) => run.cpu / base[i].cpu)), value: median(mine.map((run) => run.cpu)) })
      }
    }
  } finally {
    for (const server of servers) server.worker.kill()
  }
  return {
    id: 'koa',
    title: `Koa: a Koa 3 app per target, autocannon ${CONNECTIONS} connections × ${duration} s × ${passes} passes (req/s: higher is better; CPU/req: lower is better)`,
    legend: 'Each app runs in its own child process on 127.0.0.1 with the parser\'s defaults; autocannon runs in the parent; passes alternate between the targets. Ratios are ÷ koa-bodyparser 4.',
    rows
  }
}
