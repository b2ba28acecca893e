// Consumer fixture (bodykit only): bodykit/koa from an ES module, default and named imports as @koa/bodyparser's users
// write them, a Standard Schema (valibot 1), and the middleware in a Koa app typed with @types/koa.
import Koa from 'koa'
import bodyParser, { bodyParser as named, UnsupportedBodyTypeError, type Options } from 'bodykit/koa'
import * as v from 'valibot'

const options: Options = { schema: v.object({ name: v.string() }), checkCharset: true, onConstructorPoisoning: 'remove', discardLimit: '8mb' }
const app = new Koa()
  .use(named({ enableTypes: ['json'], parsedMethods: ['POST'] }))
  .use(bodyParser(options))
  .use(async (ctx, next) => {
    ctx.body = 'ok'
    await next()
  })

export const error: Error = new UnsupportedBodyTypeError('yaml')
export default app
