// The Bun and Deno server of the h3 bench: an h3 2 app (`new H3()`, served by the runtime's own server calling
// app.fetch) reading POST /own with h3 2's readBody and POST /bodykit with bodykit/h3's (the Web build, src/h3-web.mts,
// bundled by esbuild with `h3` aliased to h3 2 and `bodykit-h3-web` to src/h3-web.mts). GET /cpu answers the process's
// CPU time so far and the requests read. Bundled and started by bench/h3.ts: the server prints `listening <port>`.
/* global Bun, Deno */
import { H3, readBody } from 'h3'
import { readBody as bodykitReadBody } from 'bodykit-h3-web'

let requests = 0
const app = new H3()
  .post('/own', async (event) => {
    const body = await readBody(event)
    requests++
    return `read ${Object.keys(body).length} keys`
  })
  .post('/bodykit', async (event) => {
    const body = await bodykitReadBody(event)
    requests++
    return `read ${Object.keys(body).length} keys`
  })
  .get('/cpu', () => {
    const cpu = process.cpuUsage()
    return { cpuMicros: cpu.user + cpu.system, requests }
  })

if (typeof Bun !== 'undefined') {
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => app.fetch(request) })
  console.log(`listening ${server.port}`)
} else if (typeof Deno !== 'undefined') {
  Deno.serve({ port: 0, hostname: '127.0.0.1', onListen: ({ port }) => { console.log(`listening ${port}`) } }, (request) => app.fetch(request))
}
