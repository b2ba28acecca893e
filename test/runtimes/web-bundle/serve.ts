// Bun.serve or Deno.serve over the Web bundle, imported as a module from beside this file once bundled (the harness puts
// both in a temp folder): prints `{"port":N}` once listening; exits when stdin closes or after BODYKIT_SERVER_LIFETIME_MS.
// The harness's esbuild maps src/web to the Web bundle (scripts/web-bundle.mjs), a module of its own beside this one.
import * as readers from '../../../src/web'
import { createHandler, type Readers } from './route'

interface DenoGlobal {
  version: { deno: string }
  env: { get: (name: string) => string | undefined }
  serve: (options: object, handler: (request: Request) => Promise<Response>) => unknown
  stdin: { readable: AsyncIterable<Uint8Array> }
  exit: (code: number) => never
}
interface BunGlobal {
  version: string
  serve: (options: object) => { port: number, stop: (force: boolean) => void }
}
const { Deno, Bun } = globalThis as unknown as { Deno?: DenoGlobal, Bun?: BunGlobal }
interface Stdin { on: (event: string, listener: () => void) => Stdin, resume: () => void }
// Bun's `process` (Node's shape); typed here, since this file is built for a browser platform.
const nodeProcess = (globalThis as unknown as { process: { env: Record<string, string | undefined>, exit: (code: number) => never, stdin: Stdin } }).process

const lifetime = Number((Deno ? Deno.env.get('BODYKIT_SERVER_LIFETIME_MS') : nodeProcess.env.BODYKIT_SERVER_LIFETIME_MS) ?? 120000)
if (Deno) {
  const handle = createHandler(readers as unknown as Readers, 'Deno ' + Deno.version.deno)
  Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: ({ port }: { port: number }) => { console.log(JSON.stringify({ port })) } }, handle)
  setTimeout(() => Deno.exit(0), lifetime)
  void (async () => {
    for await (const _chunk of Deno.stdin.readable) { /* read until the parent closes it */ }
    Deno.exit(0)
  })()
} else if (Bun) {
  const handle = createHandler(readers as unknown as Readers, 'Bun ' + Bun.version)
  // Bun's own cap (128 MiB by default) would answer before bodykit does: lifted, so that the limits tested are bodykit's.
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, maxRequestBodySize: Number.MAX_SAFE_INTEGER, fetch: handle })
  console.log(JSON.stringify({ port: server.port }))
  const stop = (): void => { server.stop(true); nodeProcess.exit(0) }
  setTimeout(stop, lifetime)
  nodeProcess.stdin.on('end', stop).on('error', stop).resume()
}
