// Deprecation warnings, in a process of their own: each is emitted once per process, so the order of
// these tests matters (node:test runs top-level tests in order).
import assert from 'node:assert/strict'
import { after, it } from 'node:test'
import { modules } from '../helpers/entries'
import { assertBody } from '../helpers/expect'
import { serve, type Middleware } from '../helpers/server'

const warnings: Array<{ name: string, message: string }> = []
function onWarning (warning: Error): void {
  warnings.push({ name: warning.name, message: warning.message })
}
process.on('warning', onWarning)
after(() => { process.off('warning', onWarning) })

/** Warnings emitted while `action` runs (process.emitWarning reports on the next tick). */
async function warningsDuring (action: () => void): Promise<Array<{ name: string, message: string }>> {
  const start = warnings.length
  action()
  await new Promise((resolve) => setImmediate(resolve))
  return warnings.slice(start)
}

const EXTENDED = { name: 'DeprecationWarning', message: 'undefined extended: provide extended option' }
const GENERIC = { name: 'DeprecationWarning', message: 'bodyParser: use individual json/urlencoded middlewares' }

it('default entry: no factory warns, urlencoded() without extended included', async () => {
  const { json, raw, text, urlencoded } = modules.default
  assert.deepEqual(await warningsDuring(() => { json(); raw(); text(); urlencoded(); urlencoded({}) }), [])
})

it('legacy entry: urlencoded() without extended warns once per process', async () => {
  const { urlencoded } = modules.legacy
  assert.deepEqual(await warningsDuring(() => urlencoded()), [EXTENDED])
  assert.deepEqual(await warningsDuring(() => { urlencoded(); urlencoded({ limit: 10 }) }), [])
})

it('legacy entry: urlencoded() with extended given does not warn', async () => {
  const { urlencoded } = modules.legacy
  assert.deepEqual(await warningsDuring(() => { urlencoded({ extended: false }); urlencoded({ extended: true }) }), [])
})

it('legacy entry: extended left out means extended (nested) parsing', async (t) => {
  const server = await serve(t, modules.legacy.urlencoded())
  assertBody(await server.post('application/x-www-form-urlencoded', 'a[b][c]=1'), { a: { b: { c: '1' } } })
})

it('legacy entry: the generic bodyParser warns once per process', async () => {
  const generic = modules.legacy as unknown as (options?: object) => Middleware
  assert.deepEqual(await warningsDuring(() => generic({ extended: true })), [GENERIC])
  assert.deepEqual(await warningsDuring(() => { generic({ extended: false }); generic() }), [])
})
