// Property-based fuzz over real sockets (a smaller share of the runs): Node's HTTP parser, real aborts, real responses.
import assert from 'node:assert/strict'
import http, { type IncomingMessage } from 'node:http'
import net, { type AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { entries, listenerCounts, prototypeSnapshot, shieldReferencePipes, sleep, type Entry, type HttpErrorLike, type Middleware } from '../hostile/helpers'
import { checkVerdict, fuzzInput, middlewareFor, observeRequest, runsFor, toWire, type FuzzInput, type Result, type Wire } from './model'

const uncaught: unknown[] = []
const record = (err: unknown): void => { uncaught.push(err) }

interface Slot { entry: Entry, mw: Middleware, role: 'bodykit' | 'reference', result: Result, req?: IncomingMessage, nextCalled: () => void }
const slots = new Map<string, Slot>()
/** The server side of each connection, by the client's port: its 'close' ends a request's story. */
const serverSockets = new Map<number, net.Socket>()
const socketWaiters = new Map<number, (socket: net.Socket) => void>()
let server: http.Server
let port = 0

before(async () => {
  process.on('uncaughtException', record)
  process.on('unhandledRejection', record)
  server = http.createServer((req, res) => {
    const slot = slots.get(req.url ?? '')
    if (!slot) return void res.writeHead(404).end()
    slot.req = req
    if (slot.role === 'reference') shieldReferencePipes(req)
    slot.mw(req, res, (err) => {
      slot.result.calls++
      if (slot.result.calls > 1) return
      slot.nextCalled()
      const e = err as HttpErrorLike | undefined
      slot.result.err = e
      slot.result.body = (req as { body?: unknown }).body
      slot.result.consumed = req.readableEnded || req.complete
      observeRequest(slot.entry, req, slot.result)
      res.statusCode = e ? e.status : 200
      res.end(e ? String(e.type) : 'ok')
    })
  })
  server.on('connection', (socket: net.Socket) => {
    const clientPort = socket.remotePort as number
    const waiter = socketWaiters.get(clientPort)
    if (waiter === undefined) serverSockets.set(clientPort, socket)
    else waiter(socket)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
})

/** Resolves once the server's side of the connection from `clientPort` has closed. */
function serverSideClosed (clientPort: number): Promise<void> {
  const closed = (socket: net.Socket): Promise<void> => socket.destroyed ? Promise.resolve() : new Promise((resolve) => socket.once('close', () => resolve()))
  const known = serverSockets.get(clientPort)
  if (known !== undefined) {
    serverSockets.delete(clientPort)
    return closed(known)
  }
  return new Promise((resolve) => {
    socketWaiters.set(clientPort, (socket) => {
      socketWaiters.delete(clientPort)
      void closed(socket).then(resolve)
    })
  })
}
after(() => {
  process.off('uncaughtException', record)
  process.off('unhandledRejection', record)
  server.closeAllConnections()
  server.close()
})

let ids = 0
const baseline = listenerCounts(new http.IncomingMessage(new net.Socket()))

/** Sends the request on a fresh connection, chunk by chunk; aborts by destroying the socket. */
async function send (entry: Entry, role: 'bodykit' | 'reference', input: FuzzInput, wire: Wire): Promise<{ slot: Slot, delivered: number, status: number | null }> {
  const path = `/${ids++}`
  let nextCalled!: () => void
  const called = new Promise<void>((resolve) => { nextCalled = resolve })
  const slot: Slot = { entry, mw: middlewareFor(entry, role, input), role, result: { calls: 0 }, nextCalled }
  slots.set(path, slot)
  const chunked = wire.headers['transfer-encoding'] === 'chunked'
  const head = `POST ${path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n` + Object.entries(wire.headers).map(([k, v]) => `${k}: ${v}\r\n`).join('') + '\r\n'
  let delivered = 0
  let status: number | null = null
  let serverClosed!: Promise<void>
  await new Promise<void>((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    let response = ''
    socket.on('data', (data) => { response += data.toString('latin1') })
    socket.on('error', () => {})
    socket.on('close', () => {
      const match = /^HTTP\/1.1 (\d+)/.exec(response)
      status = match ? Number(match[1]) : null
      resolve()
    })
    socket.on('connect', async () => {
      serverClosed = serverSideClosed(socket.localPort as number)
      socket.write(head)
      // The pauses shape the input (pieces that arrive apart, an abort after data); no outcome is waited for by time.
      for (let i = 0; i < wire.chunks.length; i++) {
        if (input.abortAfter === i) break
        const chunk = wire.chunks[i]
        socket.write(chunked ? Buffer.concat([Buffer.from(chunk.length.toString(16) + '\r\n'), chunk, Buffer.from('\r\n')]) : chunk)
        delivered += chunk.length
        if (input.gaps) await sleep(1)
      }
      if (input.abortAfter !== null && input.abortAfter < wire.chunks.length) {
        await sleep(5)
        socket.destroy()
      } else if (chunked) socket.write('0\r\n\r\n')
    })
  })
  // The server side of the request is over once its socket closed (connection: close); by then bodykit has called
  // next (it always does, aborted or not). body-parser never calls next for some aborted uploads (an aborted
  // compressed body), and its verdict is not compared after an abort, so it is not waited for then.
  await serverClosed
  if (role === 'bodykit' || input.abortAfter === null) await called
  slots.delete(path)
  return { slot, delivered, status }
}

/** Only what Node's HTTP parser lets through: a true Content-Length, or chunked. */
const realInput = fuzzInput.map((input) => ({ ...input, framing: input.framing === 'chunked' ? 'chunked' as const : 'exact' as const }))

for (const entry of entries) {
  describe(`fuzz on real sockets (${entry.name} entry)`, () => {
    it('same verdicts as in-process, the client gets the status, no listener left', async () => {
      const protos = prototypeSnapshot()
      await fc.assert(fc.asyncProperty(realInput, async (input) => {
        const wire = toWire(input)
        const mine = await send(entry, 'bodykit', input, wire)
        const reference = await send(entry, 'reference', input, wire)
        // Node's parser decides what was delivered before an abort; compare on the bytes bodykit saw.
        if (input.abortAfter === null) checkVerdict(input, wire, mine.delivered, mine.slot.result, reference.slot.result)
        else if (mine.slot.req) assert.equal(mine.slot.result.calls, 1, 'next not called once after an abort')
        // A body the parser skipped is left unread, as body-parser leaves it: Node then closes the connection
        // under a client still sending, whose kernel may drop the 200 for the reset (seen under load).
        const skippedUnread = !mine.slot.result.err && mine.slot.result.consumed === false
        if (input.abortAfter === null && !(skippedUnread && mine.status === null)) assert.equal(mine.status, mine.slot.result.err ? mine.slot.result.err.status : 200)
        if (mine.slot.req) assert.deepEqual(listenerCounts(mine.slot.req), baseline)
        assert.equal(prototypeSnapshot(), protos)
        assert.deepEqual(uncaught, [])
      }), { numRuns: runsFor(0.05) })
    })
  })
}
