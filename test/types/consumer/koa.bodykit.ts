// Consumer fixture (bodykit only): bodykit/koa in a Koa app typed with @types/koa, from CommonJS (import = require), as
// koa-bodyparser's users write it; callbacks typed with Koa's Context, both dialects, bodykit's options, and the error class.
import Koa = require('koa')
import bodyParser = require('bodykit/koa')

const app = new Koa()
const options: bodyParser.Options = {
  enableTypes: ['json', 'form', 'text'],
  jsonLimit: '1mb',
  formLimit: 56 * 1024,
  extendTypes: { json: 'application/x-javascript', text: ['text/csv'] },
  detectJSON: (ctx: Koa.Context) => ctx.path.endsWith('.json'),
  onerror: (err: Error, ctx: Koa.Context) => ctx.throw(422, err.message),
  rawBuffer: true
}
app.use(bodyParser(options))
app.use(bodyParser.bodyParser({ parsedMethods: ['POST', 'PUT', 'PATCH'], jsonStrict: false, onError: (_err, ctx) => { ctx.status = 400 } }))
app.use((ctx) => {
  const request: bodyParser.Request = ctx.request as Koa.Request & bodyParser.Request
  ctx.body = { body: request.body, rawBody: request.rawBody, bytes: request.rawBuffer?.length }
})

try {
  bodyParser({ enableTypes: ['yaml'] })
} catch (err) {
  if (err instanceof bodyParser.UnsupportedBodyTypeError) console.log(err.message)
}

// @ts-expect-error a limit is a number or a string
bodyParser({ jsonLimit: true })

export default app
