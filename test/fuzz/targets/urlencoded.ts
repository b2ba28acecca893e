// Fuzz target 3: urlencoded(), extended and simple, with parameterLimit, depth and the charset options, whole and in
// pieces; the default entry against body-parser 2.4.0 (the same qs), the legacy entry against itself across deliveries.
import type { IncomingMessage, ServerResponse } from 'node:http'
import bodyParser2 from 'body-parser'
import bodykit from '../../../src/index'
import legacy from '../../../src/legacy'
import { answerOfError, comparable, deliveriesOf, drawSplits, runMiddleware, sameAcross, sameAnswer, withInput, type Answers, type Source } from './harness'

type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void

const CONTENT_TYPES = ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=utf-8', 'application/x-www-form-urlencoded; charset=iso-8859-1',
  'application/x-www-form-urlencoded; charset=ISO-8859-1']
const PARAMETER_LIMITS = [undefined, 1, 2, 3, 5, 10, 1000]
const DEPTHS = [undefined, 0, 1, 2, 5, 32]

export function draw (source: Source) {
  return {
    entry: source.pick('entry', ['default', 'legacy'] as const),
    extended: source.bool('extended'),
    parameterLimit: source.pick('parameterLimit', PARAMETER_LIMITS),
    depth: source.pick('depth', DEPTHS),
    charsetSentinel: source.bool('charsetSentinel'),
    interpretNumericEntities: source.bool('interpretNumericEntities'),
    defaultCharset: source.pick('defaultCharset', [undefined, 'utf-8', 'iso-8859-1'] as const),
    contentType: source.pick('contentType', CONTENT_TYPES),
    splits: drawSplits(source, 8),
    body: source.rest('body')
  }
}

type Input = ReturnType<typeof draw>

function optionsOf (input: Input): Record<string, unknown> {
  const options: Record<string, unknown> = { extended: input.extended, parameterLimit: input.parameterLimit, depth: input.depth }
  if (input.entry === 'default') Object.assign(options, { charsetSentinel: input.charsetSentinel, interpretNumericEntities: input.interpretNumericEntities, defaultCharset: input.defaultCharset })
  return options
}

export async function check (input: Input): Promise<void> {
  const options = optionsOf(input)
  const factory = (input.entry === 'default' ? bodykit.urlencoded : legacy.urlencoded) as (options: object) => Middleware
  const deliveries = deliveriesOf({ 'content-type': input.contentType }, input.body, input.splits)
  const actual = await sameAcross(() => factory(options), deliveries, `urlencoded() (${input.entry} entry)`)
  if (input.entry !== 'default') return
  const run = await runMiddleware(bodyParser2.urlencoded(options) as Middleware, deliveries[0].wire, 'body-parser')
  sameAnswer(actual, run.err ? answerOfError(run.err) : { value: comparable(run.req.body) }, 'urlencoded() against body-parser 2.4.0')
}

export const fuzz = (data: Buffer): Promise<void> => withInput('urlencoded', data, draw, check)

export const seeds: Record<string, Answers> = {
  simple: { body: 'a=1&b=2&c=%20x+y' },
  'simple-nested-literal': { body: 'a[b]=1&a[c][d]=2' },
  extended: { extended: true, body: 'a[b]=1&a[c][d]=2&e[]=3&e[]=4' },
  'extended-depth-0': { extended: true, depth: 0, body: 'a[b][c]=1' },
  'extended-depth-1': { extended: true, depth: 1, body: 'a[b][c][d]=1' },
  'extended-depth-5-deep': { extended: true, depth: 5, body: 'a' + '[x]'.repeat(40) + '=1' },
  'parameter-limit-1': { parameterLimit: 1, body: 'a=1&b=2' },
  'parameter-limit-2-exact': { parameterLimit: 2, body: 'a=1&b=2', pieces: 2, split: [3] },
  'parameter-limit-trailing-amp': { parameterLimit: 2, body: 'a=1&b=2&' },
  'parameter-limit-extended': { extended: true, parameterLimit: 3, body: 'a[]=1&a[]=2&a[]=3&a[]=4' },
  'proto-simple': { body: '__proto__=1&constructor=2&toString=3' },
  'proto-extended': { extended: true, body: '__proto__[polluted]=1&a[__proto__][b]=2&constructor[prototype][x]=3' },
  'bad-escapes': { body: 'a=%&b=%ff&c=%E2%9C&d=%zz' },
  'bad-escapes-extended': { extended: true, body: 'a=%&b=%ff&c=%E2%9C%93&%5B=1' },
  latin1: { contentType: 'application/x-www-form-urlencoded; charset=iso-8859-1', body: 'a=%E9&b=\u00e9' },
  'latin1-upper': { contentType: 'application/x-www-form-urlencoded; charset=ISO-8859-1', extended: true, body: 'x[y]=%FC' },
  'default-charset-latin1': { defaultCharset: 'iso-8859-1', body: 'n=%E9' },
  'charset-sentinel-utf8': { charsetSentinel: true, body: 'utf8=%E2%9C%93&a=%C3%A9' },
  'charset-sentinel-latin1': { charsetSentinel: true, body: 'utf8=%26%2310003%3B&a=%E9' },
  'numeric-entities': { interpretNumericEntities: true, contentType: 'application/x-www-form-urlencoded; charset=iso-8859-1', body: 'a=%26%239786%3B' },
  'arrays-index': { extended: true, body: 'a[1]=b&a[0]=c&a[25]=z&a[x]=y' },
  'big-index': { extended: true, body: 'a[999999999]=1' },
  'dots-and-empty': { extended: true, body: 'a.b=1&=2&c&&d=' },
  empty: { body: '' },
  'only-amps': { body: '&&&&' },
  legacy: { entry: 'legacy', body: 'a=%ff&__proto__=x', pieces: 3, split: [2, 6] },
  'legacy-extended': { entry: 'legacy', extended: true, body: 'a[b][c]=1&a[b][]=2' },
  'legacy-parameter-limit': { entry: 'legacy', parameterLimit: 2, body: 'a=1&b=2&c=3' },
  'legacy-depth': { entry: 'legacy', extended: true, depth: 1, body: 'a[b][c]=1' },
  'split-escape': { body: 'key=%E2%9C%93', pieces: 3, split: [6, 8] }
}
