// Real-client section (issue 9): how long each client takes to hold its 413 for a 5 or 50 MiB upload to a 1 KiB route, bodykit next to body-parser.
import { fork, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { chromiumPath, curl, curlPath, inPage, launchChromium, nodeFetch, openPlayground, python, pythonPath, startPlayground, type ParserModule, type Seen } from '../test/clients/drivers'
import { median, type Context, type Row, type SectionResult } from './report'
import { loadTarget } from './targets'

const MiB = 2 ** 20

/** One way of uploading an over-limit body; resolves with what the client saw and its own timing. */
interface ClientCase { name: string, available: boolean, send: (url: string, page: Page | null) => Promise<Seen> }

function clientCases (bigFile: string): ClientCase[] {
  const octet = { 'Content-Type': 'application/octet-stream' }
  const browser = (how: 'fetch' | 'xhr' | 'form', size: number): ClientCase => ({
    name: `Chromium ${how} ${size} MiB`,
    available: chromiumPath !== null,
    send: (_url, page) => how === 'form'
      ? inPage(page as Page, 'form', '/try/upload', [], {}, size * MiB)
      : inPage(page as Page, 'send', how, '/try/upload', { size: size * MiB, type: 'application/octet-stream' })
  })
  return [
    { name: 'python urllib 50 MiB', available: pythonPath !== null, send: (url) => python(url + 'try/upload', octet, { size: 50 * MiB }) },
    { name: 'curl 50 MiB', available: curlPath !== null, send: (url) => curl(['-o', '/dev/null', '-H', 'Content-Type: application/octet-stream', '--data-binary', '@' + bigFile, url + 'try/upload']) },
    { name: 'curl 50 MiB chunked', available: curlPath !== null, send: (url) => curl(['-o', '/dev/null', '-H', 'Content-Type: application/octet-stream', '-H', 'Transfer-Encoding: chunked', '--data-binary', '@' + bigFile, url + 'try/upload']) },
    { name: 'Node fetch 50 MiB', available: true, send: (url) => nodeFetch(url + 'try/upload', octet, Buffer.alloc(50 * MiB)) },
    browser('fetch', 5),
    browser('fetch', 50),
    browser('xhr', 5),
    browser('xhr', 50),
    browser('form', 5),
    browser('form', 50)
  ]
}

/** Parent: each client against the playground of each target (a child process per target). */
export async function clients (ctx: Context): Promise<SectionResult> {
  const ids = ctx.quick ? ['body-parser 2', 'bodykit'] : ['body-parser 2', 'bodykit', 'body-parser 1', 'bodykit/legacy']
  const targets = ctx.targets.filter((t) => ids.includes(t.id))
  const runs = ctx.quick ? 1 : 5
  const tmp = mkdtempSync(join(os.tmpdir(), 'bodykit-bench-clients-'))
  const bigFile = join(tmp, 'big.bin')
  writeFileSync(bigFile, Buffer.alloc(50 * MiB))
  const cases = clientCases(bigFile)
  for (const c of cases) if (!c.available) ctx.log(`  ${c.name}: client not installed, skipped`)
  let browser: Browser | null = null
  const rows: Row[] = []
  try {
    if (chromiumPath !== null) browser = await launchChromium()
    // Every target's playground runs at once, and each run visits the targets in a rotating order, so a
    // drift of the machine over time (other load, CPU frequency) falls on all targets alike.
    const servers: Array<{ id: string, url: string, page: Page | null, child: ChildProcess }> = []
    const results = new Map<string, Map<string, { ms: number, seen: Seen }>>()
    try {
      for (const target of targets) {
        const child = fork(__filename, ['clients-child', target.id], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
        servers.push({ id: target.id, url: '', page: null, child })
        const port = await new Promise<number>((resolve, reject) => {
          child.once('message', (msg: { port: number }) => resolve(msg.port))
          child.once('exit', (code) => reject(new Error(`clients child exited (${code})`)))
        })
        const server = servers[servers.length - 1]
        server.url = `http://127.0.0.1:${port}/`
        server.page = browser ? await openPlayground(browser, server.url) : null
        results.set(target.id, new Map())
      }
      for (const c of cases.filter((x) => x.available)) {
        const times = new Map<string, number[]>(servers.map((server) => [server.id, []]))
        const seen = new Map<string, Seen>()
        for (let i = 0; i < runs; i++) {
          for (let k = 0; k < servers.length; k++) {
            const server = servers[(i + k) % servers.length]
            if (seen.get(server.id) !== undefined && seen.get(server.id)?.status !== 413) continue
            const result = await c.send(server.url, server.page)
            seen.set(server.id, result)
            times.get(server.id)?.push(result.ms ?? NaN)
          }
        }
        for (const server of servers) {
          const mine = seen.get(server.id) as Seen
          const list = times.get(server.id) as number[]
          results.get(server.id)?.set(c.name, { ms: median(list), seen: mine })
          ctx.log(`  ${c.name} / ${server.id}: ${mine.status === 413 ? '413' : `no 413 (${mine.status} ${mine.error ?? ''})`} in ${list.map((t) => t.toFixed(0)).join(', ')} ms`)
        }
      }
    } finally {
      for (const server of servers) {
        await server.page?.close()
        server.child.kill()
      }
    }
    for (const c of cases.filter((x) => x.available)) {
      for (const target of targets) {
        const mine = results.get(target.id)?.get(c.name)
        const base = results.get(target.baseline)?.get(c.name)
        if (!mine) continue
        const got413 = mine.seen.status === 413
        rows.push({
          case: `${c.name}: time to 413`,
          target: target.id,
          baseline: target.baseline,
          ratio: got413 && base?.seen.status === 413 ? mine.ms / base.ms : null,
          value: got413 ? mine.ms : null,
          unit: 'ms',
          note: got413 ? undefined : `no 413: ${mine.seen.error ?? mine.seen.status}`
        })
      }
    }
  } finally {
    await browser?.close()
    rmSync(tmp, { recursive: true, force: true })
  }
  return {
    id: 'clients',
    title: `Real clients: time until the client holds its 413, uploading to a 1 KiB route over loopback (median of ${runs}; ratio to baseline, lower is better)`,
    legend: 'Measured by each client (python\'s time.monotonic, curl\'s time_total, performance.now in Node and in the page) from the start of the request to the response. A client that got no 413 (a broken pipe, a network error) has no ratio.',
    rows
  }
}

/** Child: the playground of examples/server.js with the target's parsers. */
async function childServer (targetId: string): Promise<void> {
  const server = await startPlayground(loadTarget(targetId).parsers as unknown as ParserModule)
  process.send?.({ port: Number(new URL(server.url).port) })
  process.on('disconnect', () => process.exit(0))
}

if (process.argv[2] === 'clients-child') {
  childServer(process.argv[3]).catch((err: unknown) => { console.error(err); process.exit(1) })
}
