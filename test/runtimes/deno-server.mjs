// Deno.serve over bodykit's built `dist/`: prints `{"port":N}` once listening; exits when stdin closes or after BODYKIT_SERVER_LIFETIME_MS.
/* global Deno */
import { createRequire } from 'node:module'
import { createHandler } from './web-routes.ts'

const require = createRequire(import.meta.url)
const handle = createHandler(require('../../dist/index.js'), 'Deno ' + Deno.version.deno)
const onListen = ({ port }) => { console.log(JSON.stringify({ port })) }
Deno.serve({ hostname: '127.0.0.1', port: 0, onListen }, handle)
setTimeout(() => Deno.exit(0), Number(Deno.env.get('BODYKIT_SERVER_LIFETIME_MS') ?? 120000))
const drain = async () => { for await (const _chunk of Deno.stdin.readable) { /* read until the parent closes it */ } Deno.exit(0) }
drain()
