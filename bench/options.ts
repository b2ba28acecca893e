// bodykit-options section: what rawBody, the poisoning options and the promise API cost next to the same parser with default options.
import type { IncomingMessage } from 'node:http'
import { cases, type Case } from './cases'
import { benchCases } from './in-process'
import type { Context, SectionResult } from './report'
import type { Middleware, ParserName, Parsers, Target } from './targets'

type Reader = (req: IncomingMessage, options?: Record<string, unknown>) => Promise<unknown>
type Readers = Record<'readJson' | 'readRaw' | 'readText' | 'readUrlencoded', Reader>

const READER_OF: Record<ParserName, keyof Readers> = { json: 'readJson', raw: 'readRaw', text: 'readText', urlencoded: 'readUrlencoded' }

/** The same factories with bodykit-only options added (the poisoning ones to json only: the others have none). */
function withOptions (parsers: Parsers, extra: Record<string, unknown>, jsonOnly = false): Parsers {
  const wrap = (name: ParserName) => (options?: Record<string, unknown>) => parsers[name](jsonOnly && name !== 'json' ? options : { ...options, ...extra })
  return { json: wrap('json'), raw: wrap('raw'), text: wrap('text'), urlencoded: wrap('urlencoded') }
}

/** The promise API as a middleware: one shared options object (validated once), req.body set from the result. */
function viaReaders (readers: Readers): Parsers {
  const wrap = (name: ParserName) => (options?: Record<string, unknown>): Middleware => {
    const shared = { ...options }
    return (req, _res, next) => {
      readers[READER_OF[name]](req, shared).then((body) => {
        (req as IncomingMessage & { body?: unknown }).body = body
        next()
      }, next)
    }
  }
  return { json: wrap('json'), raw: wrap('raw'), text: wrap('text'), urlencoded: wrap('urlencoded') }
}

/** The 10 KiB JSON with every non-ASCII character written as a `\u` escape (as Python's json.dumps sends it). */
function escaped (c: Case): Case {
  const text = c.body.toString('utf8').replace(/[\u0080-\uffff]/g, (ch) => '\\u' + ch.charCodeAt(0).toString(16).padStart(4, '0'))
  return { ...c, name: c.name + ' (\\u escapes)', body: Buffer.from(text) }
}

export async function bodykitOptions (ctx: Context): Promise<SectionResult> {
  const bodykit = ctx.targets.find((t) => t.id === 'bodykit')
  if (!bodykit) throw new Error('the bodykit target is missing')
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const readers = require(bodykit.source.startsWith('dist') ? '../dist/index.js' : '../src/index') as Readers
  const base = 'bodykit'
  const targets: Target[] = [
    { ...bodykit, baseline: base },
    { ...bodykit, id: '+ rawBody', baseline: base, parsers: withOptions(bodykit.parsers, { rawBody: true }) },
    { ...bodykit, id: '+ onProtoPoisoning error', baseline: base, parsers: withOptions(bodykit.parsers, { onProtoPoisoning: 'error' }, true) },
    { ...bodykit, id: '+ both poisoning remove', baseline: base, parsers: withOptions(bodykit.parsers, { onProtoPoisoning: 'remove', onConstructorPoisoning: 'remove' }, true) },
    { ...bodykit, id: 'promise API', baseline: base, parsers: viaReaders(readers) },
    // The schema's cost with a schema is the schema section's; this row shows that leaving it out costs nothing.
    { ...bodykit, id: '+ schema: undefined', baseline: base, parsers: withOptions(bodykit.parsers, { schema: undefined }) }
  ]
  const pick = (name: string): Case => cases.find((c) => c.name === name) as Case
  const selected = [pick('json 69 B'), pick('json 10 KiB'), escaped(pick('json 10 KiB')), pick('urlencoded 60 B'), pick('text 1 KiB')]
  const rows = await benchCases(selected, targets, ctx)
  return {
    id: 'options',
    title: 'bodykit\'s own options: time per request ÷ bodykit with default options (lower is faster; 1.00 = no cost)',
    legend: 'As the in-process section. The poisoning options apply to json only (their other rows show the noise); no body holds a poisoning key, and escaped non-ASCII text does not make the guard walk the value. The promise API column wraps readJson etc. with one shared options object.',
    geomean: true,
    rows
  }
}
