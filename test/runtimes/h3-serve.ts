// Bun.serve or Deno.serve over the h3 2 app of test/runtimes/h3-app.ts (`app.fetch`), bundled by test/runtimes/h3-harness.ts
// into a temp folder: prints `{"port":N}` once listening; exits when stdin closes or after BODYKIT_SERVER_LIFETIME_MS.
import { createApp } from './h3-app'

/** Which build of bodykit/h3 the bundle holds ('web' or 'node'): set by the harness's esbuild (`define`). */
declare const BODYKIT_H3_BUILD: string

interface DenoGlobal {
  version: { deno: string }
  env: { get: (name: string) => string | undefined }
  serve: (options: object, handler: (request: Request) => Response | Promise<Response>) => unknown
  stdin: { readable: AsyncIterable<Uint8Array> }
  exit: (code: number) => never
}
interface BunGlobal {
  version: string
  serve: (options: object) => { port: number, stop: (force: boolean) => void }
}
const { Deno, Bun } = globalThis as unknown as { Deno?: DenoGlobal, Bun?: BunGlobal }
interface Stdin { on: (event: string, listener: () => void) => Stdin, resume: () => void }
// Bun's `process` (Node's shape); typed here, since this file may be built for a browser platform.
const nodeProcess = (globalThis as unknown as { process: { env: Record<string, string | undefined>, exit: (code: number) => never, stdin: Stdin } }).process

const lifetime = Number((Deno ? Deno.env.get('BODYKIT_SERVER_LIFETIME_MS') : nodeProcess.env.BODYKIT_SERVER_LIFETIME_MS) ?? 120000)
if (Deno) {
  const app = createApp('Deno ' + Deno.version.deno, BODYKIT_H3_BUILD)
  Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: ({ port }: { port: number }) => { console.log(JSON.stringify({ port })) } }, (request) => app.fetch(request))
  setTimeout(() => Deno.exit(0), lifetime)
  void (async () => {
    for await (const _chunk of Deno.stdin.readable) { /* read until the parent closes it */ }
    Deno.exit(0)
  })()
} else if (Bun) {
  const app = createApp('Bun ' + Bun.version, BODYKIT_H3_BUILD)
  // Bun's own cap (128 MiB by default) would answer before bodykit does: lifted, so that the limits tested are bodykit's.
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, maxRequestBodySize: Number.MAX_SAFE_INTEGER, fetch: (request: Request) => app.fetch(request) })
  console.log(JSON.stringify({ port: server.port }))
  const stop = (): void => { server.stop(true); nodeProcess.exit(0) }
  setTimeout(stop, lifetime)
  nodeProcess.stdin.on('end', stop).on('error', stop).resume()
}
