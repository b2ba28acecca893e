// Real HTTP clients (headless Chromium, curl, python's urllib, Node's fetch) and the playground servers they talk to, shared by the client tests and the bench.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import type { Server } from 'node:http'
import type { Http2SecureServer, ServerHttp2Session } from 'node:http2'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'

const load = createRequire(__filename)

/** What a client saw: the status and the playground's answer (`{ status, type, message, body }`), or the client's own error. */
export interface Seen {
  status: number
  answer?: unknown
  /** The client's error when it got no response (a network error, a broken pipe). */
  error?: string
  /** Milliseconds from the start of the request to the response (measured by the client). */
  ms?: number
}

/** A body-parser-compatible module: bodykit's entries or body-parser itself. */
export type ParserModule = Record<'json' | 'raw' | 'text' | 'urlencoded', (options?: object) => unknown>

type Playground = Server | Http2SecureServer

/**
 * Starts the playground of examples/server.js on 127.0.0.1 with `parsers` (over HTTP/2 and TLS with `tls`);
 * resolves with its URL and a stop function.
 */
export async function startPlayground (parsers: ParserModule, tls?: { key: string, cert: string }): Promise<{ url: string, close: () => Promise<void> }> {
  const { createPlayground } = load(join(__dirname, '..', '..', 'examples', 'server.js')) as { createPlayground: (p: ParserModule, options?: object) => Playground }
  const server = createPlayground(parsers, tls ? { tls } : {})
  const sessions = new Set<ServerHttp2Session>()
  server.on('session', (session: ServerHttp2Session) => {
    sessions.add(session)
    session.on('close', () => sessions.delete(session))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () => new Promise((resolve) => {
      for (const session of sessions) session.destroy()
      if ('closeAllConnections' in server) server.closeAllConnections()
      server.close(() => resolve())
    })
  }
}

function firstExisting (files: Array<string | undefined>): string | null {
  return files.find((file) => file !== undefined && file !== '' && existsSync(file)) ?? null
}

/** Debian's chromium (CHROMIUM_PATH overrides); null when not installed. */
export const chromiumPath = firstExisting([process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'])
export const curlPath = firstExisting(['/usr/bin/curl', '/usr/local/bin/curl', '/bin/curl'])

/** The python3 on PATH, if it runs. */
export const pythonPath: string | null = (() => {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const file = join(dir, 'python3')
    if (existsSync(file)) return file
  }
  return null
})()

/** Why a client's tests are skipped, or false when it is installed (printed, so the run says which clients ran). */
export function skipReason (name: string, path: string | null): string | false {
  if (path !== null) return false
  const reason = `${name} is not installed: its real-client tests are skipped`
  console.log('# ' + reason)
  return reason
}

/** Launches headless Chromium (one per test file or bench run); `extraArgs` e.g. `--ignore-certificate-errors`. */
export async function launchChromium (extraArgs: string[] = []): Promise<Browser> {
  const { chromium } = await import('playwright-core')
  // --no-sandbox: CI runs as root, where Chromium's sandbox cannot start.
  return chromium.launch({ executablePath: chromiumPath as string, args: ['--no-sandbox', '--disable-gpu', ...extraArgs], timeout: 30_000 })
}

/** Opens the playground at `url` in a new page, with page-helpers.js as `globalThis.bodykitTest`. */
export async function openPlayground (browser: Browser, url: string): Promise<Page> {
  const page = await browser.newPage()
  page.setDefaultTimeout(60_000)
  await page.addInitScript({ path: join(__dirname, 'page-helpers.js') })
  await page.goto(url)
  return page
}

type PageHelper = (...args: unknown[]) => unknown

/** Calls a helper of page-helpers.js in the page (the browser runs it: no DOM types are needed here). */
export function inPage<T = Seen> (page: Page, helper: string, ...args: unknown[]): Promise<T> {
  return page.evaluate(([helper, args]) => (globalThis as unknown as { bodykitTest: Record<string, PageHelper> }).bodykitTest[helper](...args), [helper, args] as const) as Promise<T>
}

function run (file: string, args: string[], input?: string): Promise<{ stdout: string, stderr: string, code: number }> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      resolve({ stdout, stderr, code: err ? (typeof err.code === 'number' ? err.code : 1) : 0 })
    })
    if (input !== undefined) child.stdin?.end(input)
  })
}

/** Runs curl with `args` (URL included); the answer is parsed when it is JSON. */
export async function curl (args: string[]): Promise<Seen> {
  const { stdout, stderr, code } = await run(curlPath as string, ['-sS', '-w', '\n%{http_code} %{time_total}', ...args])
  const lines = stdout.split('\n')
  const [status, seconds] = (lines.pop() as string).split(' ')
  const text = lines.join('\n')
  if (code !== 0 && status === '000') return { status: 0, error: stderr.trim() }
  return { status: Number(status), answer: parseJson(text), ms: Number(seconds) * 1000 }
}

function parseJson (text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

// python's urllib.request: the body is written in full, then the response is read (as by most SDKs).
const PYTHON_CLIENT = `
import base64, json, sys, time, urllib.error, urllib.request
spec = json.load(sys.stdin)
data = b'\\0' * spec['size'] if 'size' in spec else base64.b64decode(spec['body'])
started = time.monotonic()
try:
    res = urllib.request.urlopen(urllib.request.Request(spec['url'], data=data, headers=spec['headers']), timeout=60)
    out = {'status': res.status, 'text': res.read().decode('utf-8')}
except urllib.error.HTTPError as err:
    out = {'status': err.code, 'text': err.read().decode('utf-8'), 'httpError': True}
except Exception as err:
    out = {'status': 0, 'error': repr(err)}
out['ms'] = (time.monotonic() - started) * 1000
print(json.dumps(out))
`

/** Posts with python3's urllib.request; an error status arrives as urllib's HTTPError (reported in `error` as `HTTPError <status>`). */
export async function python (url: string, headers: Record<string, string>, body: Buffer | { size: number }): Promise<Seen> {
  const spec = Buffer.isBuffer(body) ? { url, headers, body: body.toString('base64') } : { url, headers, size: body.size }
  const { stdout, stderr } = await run(pythonPath as string, ['-c', PYTHON_CLIENT], JSON.stringify(spec))
  let out: { status: number, text?: string, error?: string, httpError?: boolean, ms: number }
  try {
    out = JSON.parse(stdout)
  } catch {
    return { status: 0, error: 'python failed: ' + stderr.slice(-300) }
  }
  if (out.error !== undefined) return { status: 0, error: out.error, ms: out.ms }
  return { status: out.status, answer: parseJson(out.text ?? ''), ms: out.ms, ...(out.httpError ? { error: `HTTPError ${out.status}` } : {}) }
}

/** Posts with Node's fetch; `body` may be a stream (sent chunked, `duplex: 'half'`). */
export async function nodeFetch (url: string, headers: Record<string, string>, body: RequestInit['body']): Promise<Seen> {
  const started = performance.now()
  try {
    const res = await fetch(url, { method: 'POST', headers, body, duplex: 'half' } as RequestInit)
    const text = await res.text()
    return { status: res.status, answer: parseJson(text), ms: performance.now() - started }
  } catch (err) {
    return { status: 0, error: String((err as Error).cause ?? err), ms: performance.now() - started }
  }
}

/** Drops the timing, which differs between runs, to compare what two servers gave a client. */
export function visible (seen: Seen): Omit<Seen, 'ms'> {
  const { ms: _ms, ...rest } = seen
  return rest
}
