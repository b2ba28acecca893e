// Bun.serve over bodykit's built `dist/`: prints `{"port":N}` once listening; exits when stdin closes or after BODYKIT_SERVER_LIFETIME_MS.
/* global Bun */
import { createRequire } from 'node:module'
import { createHandler } from './web-routes.ts'

const require = createRequire(import.meta.url)
const handle = createHandler(require('../../dist/index.js'), 'Bun ' + Bun.version)
// Bun's own cap (128 MiB by default) would answer before bodykit does: lifted, so that the limits tested are bodykit's.
const server = Bun.serve({ hostname: '127.0.0.1', port: 0, maxRequestBodySize: Number.MAX_SAFE_INTEGER, fetch: handle })
console.log(JSON.stringify({ port: server.port }))
const stop = () => { server.stop(true); process.exit(0) }
setTimeout(stop, Number(process.env.BODYKIT_SERVER_LIFETIME_MS ?? 120000))
process.stdin.on('end', stop).on('error', stop).resume()
