// Every request-like users' tests feed to body parsers (a PassThrough with headers, Readable.from, a bare
// IncomingMessage, node-mocks-http, light-my-request, serverless-http, @codegenie/serverless-express), with valid,
// refused and damaged bodies, sent to bodykit and to the library it replaces (body-parser 2.4.0, 1.20.6, multer 2.5.0).
//
// The rule: each kind gives the replaced library's answer. Where the replaced library throws (synchronously or
// uncaught), hangs or calls next twice on a kind, or where its answer is an artefact of the fake (see isArtefact),
// bodykit gives instead the answer the replaced library gives for the same body on a real stream (the oracle: a
// PassThrough written after the call, carrying the same preset req.body as the fake). bodykit itself never throws,
// never leaves an exception uncaught and never hangs.
//
// Env: REQUEST_LIKE_RUNS     drawn combinations per library on top of the full kind × body product (default 80)
//      REQUEST_LIKE_SEED     fast-check seed for the drawn combinations (default: random, printed)
//      REQUEST_LIKE_TIMEOUT_MS  how long a run may take before it counts as a hang (default 400)
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { diffPaths } from '../differential/harness'
import {
  BODIES, KINDS, LIBRARIES, RES_KINDS, describeSpec, echoOf, isHttpKind, normalise, presetOf, projectAnswer,
  projectHttp, runOnce, variantsOf, withUncaughtRecorded, type Answer, type BodyCase, type HeaderVariant, type Kind, type Library,
  type RunRecord, type RunSpec
} from './request-likes'

const RUNS = Number(process.env.REQUEST_LIKE_RUNS ?? 80)
const SEED = Number(process.env.REQUEST_LIKE_SEED ?? Math.floor(Math.random() * 2 ** 31))

interface Verdict {
  spec: RunSpec
  reference: RunRecord
  candidate: RunRecord
  /** Where the expected answer came from, and why. */
  source: 'reference' | 'oracle'
  why?: string
  problems: string[]
}

/** How the replaced library broke on this run, if it did. */
function brokenBy (r: RunRecord): string | undefined {
  if (r.thrown !== undefined) return 'threw ' + r.thrown
  if (r.uncaught.length > 0) return 'uncaught ' + r.uncaught.join(' | ')
  if (r.hang) return 'hang'
  if (r.answer !== undefined && r.answer.nextCalls > 1) return `called next ${r.answer.nextCalls} times`
  if (r.answer === undefined && r.http === undefined) return 'no answer'
  return undefined
}

function errorMessage (r: RunRecord): string | undefined {
  const view = (r.answer?.error ?? (r.http?.echo as Record<string, unknown> | undefined)) as { message?: unknown } | undefined
  const message = view?.message as [string, string] | undefined
  return message?.[0] === 'string' ? message[1] : undefined
}

/**
 * Answers that come from the fake, not from the body: the oracle's answer is taken instead.
 * - body-parser 1.x and 2.x call next() with `TypeError: req.pipe is not a function` for a compressed body on
 *   node-mocks-http (the fake has no stream methods, so the inflate stage cannot pipe it): nothing of the body was read.
 * - multer answers `Request aborted` on a bare `new IncomingMessage(socket)` whose body was pushed whole: without an
 *   HTTP parser nothing sets `complete`, so Node's IncomingMessage emits 'aborted' when the ended stream is destroyed.
 */
function isArtefact (spec: RunSpec, r: RunRecord): string | undefined {
  const message = errorMessage(r)
  if (message !== undefined && /^req\.\w+ is not a function$/.test(message)) return `answered "${message}": the fake has no stream methods`
  if (spec.library === 'multer' && spec.kind === 'bare-socket' && message === 'Request aborted') return 'answered "Request aborted": a bare IncomingMessage is never marked complete'
  return undefined
}

const oracleCache = new Map<string, RunRecord>()

/** The replaced library's answer for the same body on a real stream: a PassThrough written after the call. */
async function oracleFor (spec: RunSpec): Promise<RunRecord> {
  const variant: HeaderVariant = isHttpKind(spec.kind) && spec.variant === 'length-number' ? 'length-string' : spec.variant
  const oracle: RunSpec = { library: spec.library, body: spec.body, kind: 'stream-later', res: 'mocks-http', variant, splits: [], preset: presetOf(spec.kind) }
  const key = describeSpec(oracle)
  let record = oracleCache.get(key)
  if (!record) {
    record = await runOnce(oracle, 'reference')
    oracleCache.set(key, record)
  }
  return record
}

/** An inflated count: a 413 `received` past `limit` by at most one 16 KiB zlib output chunk. */
const INFLATED_COUNT_SLACK = 16 * 1024

/**
 * The rule test/differential/harness.ts applies to `received` on a 413 after inflation: body-parser counts the zlib
 * output chunks read so far, which depend on how the compressed body was split; bodykit reports the count for the
 * body in one piece (docs/differences.md). For a compressed body in several pieces both must be past `limit` by at
 * most one chunk, and are then not compared further.
 */
function applyInflatedCountRule (spec: RunSpec, answer: Answer): Answer {
  const props = (answer.error as { ownEnumerable?: Record<string, [string, string]> } | undefined)?.ownEnumerable
  if (spec.body.contentEncoding === undefined || spec.splits.length === 0 || props?.type?.[1] !== 'entity.too.large' || props.received === undefined) return answer
  const received = Number(props.received[1])
  const limit = Number(props.limit?.[1])
  if (!(received > limit && received <= limit + INFLATED_COUNT_SLACK)) return answer
  const copy = normalise(answer)
  ;(copy.error as { ownEnumerable: Record<string, unknown> }).ownEnumerable.received = ['rule', 'past limit by at most 16 KiB']
  return copy
}

/** What is compared of one run: the projected answer (kinds 1-5) or the projected HTTP answer (kinds 6-8). */
function comparable (spec: RunSpec, r: RunRecord): unknown {
  const { library, kind } = spec
  if (isHttpKind(kind)) {
    if (r.http !== undefined) return normalise(projectHttp(library, r.http))
    if (r.answer !== undefined) return normalise(projectHttp(library, echoOf(library, r.answer)))
    return { noAnswer: true }
  }
  return r.answer === undefined ? { noAnswer: true } : normalise(projectAnswer(library, applyInflatedCountRule(spec, r.answer)))
}

async function judge (spec: RunSpec): Promise<Verdict> {
  const reference = await runOnce(spec, 'reference')
  const candidate = await runOnce(spec, 'candidate')
  const problems: string[] = []
  if (candidate.thrown !== undefined) problems.push('bodykit threw: ' + candidate.thrown)
  for (const u of candidate.uncaught) problems.push('bodykit left uncaught: ' + u)
  if (candidate.hang) problems.push(`bodykit hung (no answer within the run's timeout)`)
  if (candidate.answer !== undefined && candidate.answer.nextCalls > 1) problems.push(`bodykit called next ${candidate.answer.nextCalls} times`)

  let expectedRecord = reference
  let source: Verdict['source'] = 'reference'
  const why = brokenBy(reference) ?? isArtefact(spec, reference)
  if (why !== undefined) {
    source = 'oracle'
    expectedRecord = await oracleFor(spec)
    const broken = brokenBy(expectedRecord)
    if (broken !== undefined) problems.push(`the oracle itself broke (${broken}): fix the test`)
  }
  let expected = comparable(spec, expectedRecord)
  if (source === 'oracle' && isHttpKind(spec.kind) && expectedRecord.answer !== undefined) {
    expected = normalise(projectHttp(spec.library, echoOf(spec.library, { ...expectedRecord.answer, nextCalls: 1 } as Answer)))
  }
  if (!candidate.hang && candidate.thrown === undefined) {
    const actual = comparable(spec, candidate)
    if (JSON.stringify(actual) !== JSON.stringify(expected)) {
      problems.push(`answer differs from the ${source === 'reference' ? "replaced library's" : `oracle's (the replaced library ${why})`}:\n` +
        diffPaths(actual, expected).map((d) => '      ' + d).join('\n'))
    }
  }
  return { spec, reference, candidate, source, why, problems }
}

// ---------------------------------------------------------------------------
// The combinations: the full kind × body product once, then fast-check's draws.
// ---------------------------------------------------------------------------
function productSpecs (library: Library): RunSpec[] {
  const out: RunSpec[] = []
  BODIES[library].forEach((body, b) => {
    KINDS.forEach((kind, k) => {
      const variants = variantsOf(body).filter((v) => !isHttpKind(kind) || v !== 'length-number')
      out.push({ library, body, kind, res: RES_KINDS[(b + k) % RES_KINDS.length], variant: variants[(b + k) % variants.length], splits: [] })
    })
  })
  return out
}

function specArbitrary (library: Library): fc.Arbitrary<RunSpec> {
  return fc.record({
    body: fc.constantFrom(...BODIES[library]),
    kind: fc.constantFrom(...KINDS),
    res: fc.constantFrom(...RES_KINDS),
    variantPick: fc.nat(),
    splits: fc.uniqueArray(fc.integer({ min: 1, max: 400 }), { maxLength: 2 }),
    base64: fc.boolean()
  }).map(({ body, kind, res, variantPick, splits, base64 }: { body: BodyCase, kind: Kind, res: RunSpec['res'], variantPick: number, splits: number[], base64: boolean }) => {
    const variants = variantsOf(body).filter((v) => !isHttpKind(kind) || v !== 'length-number')
    const inside = splits.map((s) => s % Math.max(1, body.body.length)).filter((s) => s > 0).sort((a, b) => a - b)
    return { library, body, kind, res, variant: variants[variantPick % variants.length], splits: isHttpKind(kind) ? [] : inside, base64: kind === 'serverless-http' || kind === 'serverless-express' ? base64 : undefined }
  })
}

// ---------------------------------------------------------------------------
// The suite
// ---------------------------------------------------------------------------
describe('request-likes: bodykit and the library it replaces, on every request-like users feed a body parser', () => {
  const verdicts: Verdict[] = []
  const orphans: string[] = []
  let elapsed = 0

  before(async () => {
    const started = Date.now()
    const specs: RunSpec[] = []
    for (const library of LIBRARIES) {
      specs.push(...productSpecs(library))
      specs.push(...fc.sample(specArbitrary(library), { numRuns: RUNS, seed: SEED + LIBRARIES.indexOf(library) }))
    }
    const { orphans: left } = await withUncaughtRecorded(async () => {
      for (const spec of specs) verdicts.push(await judge(spec))
    })
    orphans.push(...left)
    elapsed = Date.now() - started
  })

  for (const library of LIBRARIES) {
    for (const kind of KINDS) {
      it(`${library} / ${kind}: the replaced library's answer (or the oracle's where it breaks), and bodykit never throws nor hangs`, () => {
        const failed = verdicts.filter((v) => v.spec.library === library && v.spec.kind === kind && v.problems.length > 0)
        assert.ok(verdicts.some((v) => v.spec.library === library && v.spec.kind === kind), 'no run was made')
        const seen = new Set<string>()
        const report = failed.filter((v) => {
          // one line per body and first problem: the draws repeat the product's failures
          const key = v.spec.body.name + '|' + v.problems[0].split('\n')[0]
          if (seen.has(key)) return false
          seen.add(key)
          return true
        }).map((v) => `${describeSpec(v.spec)}\n    ${v.problems.join('\n    ')}`)
        assert.equal(failed.length, 0, `${failed.length} failing runs (seed ${SEED}), distinct ones:\n${report.join('\n')}`)
      })
    }
  }

  it('no exception is left uncaught between runs', () => {
    assert.deepEqual(orphans, [])
  })

  after(() => {
    const rows: string[][] = [['library', 'kind', 'runs', 'agreed with replaced lib', 'replaced lib threw/hung', '… answered as oracle', 'artefact → oracle', 'bodykit uncaught', 'bodykit hung', 'failing']]
    for (const library of LIBRARIES) {
      for (const kind of KINDS) {
        const vs = verdicts.filter((v) => v.spec.library === library && v.spec.kind === kind)
        const fromReference = vs.filter((v) => v.source === 'reference')
        const broke = vs.filter((v) => v.source === 'oracle' && brokenBy(v.reference) !== undefined)
        const artefacts = vs.filter((v) => v.source === 'oracle' && brokenBy(v.reference) === undefined)
        const answered = (list: Verdict[]): number => list.filter((v) => v.problems.length === 0).length
        rows.push([library, kind, String(vs.length), `${answered(fromReference)}/${fromReference.length}`, String(broke.length), `${answered(broke)}/${broke.length}`,
          `${answered(artefacts)}/${artefacts.length}`, String(vs.reduce((n, v) => n + v.candidate.uncaught.length + (v.candidate.thrown !== undefined ? 1 : 0), 0)),
          String(vs.filter((v) => v.candidate.hang).length), String(vs.filter((v) => v.problems.length > 0).length)])
      }
    }
    const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)))
    const lines = rows.map((r) => r.map((cell, c) => c < 2 ? cell.padEnd(widths[c]) : cell.padStart(widths[c])).join('  '))
    console.log(`\nrequest-likes: ${verdicts.length} combinations (product + ${RUNS} draws per library, seed ${SEED}) in ${(elapsed / 1000).toFixed(1)} s\n` + lines.join('\n'))
  })
})
