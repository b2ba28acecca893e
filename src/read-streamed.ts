// The body streamed to a parser's stage (multipart): cut at `limit` on the wire and after inflation, counted against
// its declared length, the stage's result handed on once both the stage and the request have ended.
import type { Transform } from 'stream'
import { validateBody } from './body-rules'
import * as errors from './errors'
import { isEndedEarly } from './inflate'
import { afterInflating, detachInflater, inflatedBeforeDamage, writeTo } from './inflate-stream'
import { checkBeforeReading, fail, report, type BodyRead, type BodyStage, type StageResult } from './read'
import { headerOf } from './sources/source'
import { LimitedInput } from './stage-input'
import { WireCounter, parseLength } from './wire'

/**
 * A streaming stage reads the body: the request (inflated if need be) is given to it cut at `limit`, on the wire and
 * after inflation, and the stage's result is handed on once both the stage and the request have ended. A body's
 * answer is its first error in byte order (issue 45): past a limit the stage has been given the bytes up to it, and
 * the 413 is the answer once it has judged them, unless it found an error in them. Any failure stops the stage and
 * removes what it stored before it is reported.
 */
export function readStreamed (read: BodyRead): void {
  const { settings, req, res, lifetime, contentEncoding } = read
  const { limit, debug } = settings
  const stage = settings.stage as BodyStage
  const body = read.body()
  const stateError = checkBeforeReading(req, body, limit)
  if (stateError !== null) {
    process.nextTick(fail, read, stateError)
    return
  }
  if (debug.enabled) debug('read body as a stream')
  const declared = parseLength(headerOf(req, 'content-length'))
  const inflater = contentEncoding === 'identity' ? null : (settings.variant.decompressors.get(contentEncoding) as () => Transform)()
  let settled = false
  let result: StageResult | null = null
  /** `err`: an error as it is to be reported (reading errors are described by errors.readFailed first). */
  const settle = (err: Error | null): void => {
    if (settled) return
    settled = true
    lifetime.onGone = null
    wire.stop()
    wireInput.stop()
    if (inflater !== null) {
      (inflated as LimitedInput).stop()
      detachInflater(body, inflater)
    }
    if (err === null) {
      deliverStaged(read, result as StageResult)
      return
    }
    // A stage that had already failed (multer: a limit waiting for a write) reports its own error, as multer does.
    reading.abort((own) => { report(read, own ?? err) })
  }
  const settleRead = (err: Error): void => { settle(errors.readFailed(err)) }
  /** Past a limit (or at a damage zlib found): the stage was given the bytes before it; its judgement of them comes first. */
  const refuseOnceJudged = (err: Error): void => { reading.judged(() => { settleRead(err) }) }
  /**
   * A compressed body whose length is wrong (known at its end): bytes that came before may still be in zlib. The
   * stage reads them first, as it has read every byte of an uncompressed body by then; the length's verdict comes
   * after, and before zlib's own complaint about a body cut short.
   */
  let lengthVerdict: Error | null = null
  const onWireError = (err: Error): void => {
    if (inflater === null || (err as { type?: unknown }).type !== 'request.size.invalid' || inflater.writableFinished) {
      settleRead(err)
      return
    }
    lengthVerdict = err
    const giveVerdict = (): void => { setImmediate(settleRead, err) }
    inflater.once('end', giveVerdict)
    inflater.once('close', giveVerdict)
  }
  // The count for a length that does not match, an abort or a read error; `limit` is the stage's input's to apply.
  const wire = new WireCounter(body, declared, onWireError, function onWireEnd () {
    if (result !== null) settle(null)
  })
  // Past `limit` on the wire (for a compressed body too: issue 5, bp #454): the 413, once the stage has judged what
  // the bytes before it are (inflated).
  const wireInput = new LimitedInput(body, limit, function onWirePastLimit (received) {
    const err = errors.entityTooLarge(limit, received)
    if (inflater === null) refuseOnceJudged(err)
    // zlib's output of the bytes before the limit all reaches the stage first (unless zlib fails on them: see below).
    else afterInflating(inflater, () => { if (!inflater.destroyed) refuseOnceJudged(err) })
  })
  let inflated: LimitedInput | null = null
  if (inflater !== null) {
    // A damage zlib finds in the wire bytes before the limit is an error before the wire's.
    inflated = inflateForStage(read, inflater, wireInput, { cutShort: () => lengthVerdict !== null, refuse: refuseOnceJudged })
  }
  const reading = stage.start(inflated ?? wireInput, req, res, function onStaged (err, staged) {
    if (err !== null) {
      settle(err)
      return
    }
    result = staged as StageResult
    // A length verdict waits for zlib's last bytes, never for a success.
    if (wire.ended && lengthVerdict === null) settle(null)
  })
  // The connection closed while the stage still waits (on a fileFilter or an engine that may never call back).
  lifetime.onGone = () => { settle(errors.requestAborted(wire.received, declared)) }
}

/** What inflateForStage tells its caller: whether the body's length was found wrong, and where a 413 or a damage goes. */
interface InflatedVerdicts {
  /** The body's length was wrong: zlib's complaint about a body cut short is not the answer. */
  readonly cutShort: () => boolean
  /** A 413 for the inflated bytes past `limit`, or zlib's error for a damage: the stage judges what came before. */
  readonly refuse: (err: Error) => void
}

/**
 * Inflates a body cut at `limit` on the wire for a stage: returns zlib's output, cut at `limit` too (its 413 goes to
 * `refuse`). zlib's error is `refuse`d once what the bytes before the damage inflate to is given to the stage: Node's
 * zlib drops the output of the write it fails in, so that output is worked out again from the wire bytes, kept for
 * this where that work is bounded (`inflatedBeforeDamage`: a `limit` of at most 256 KiB). An error after the inflated
 * limit was passed, or zlib's complaint about a body whose length was wrong (`cutShort`), is not the answer.
 */
function inflateForStage (read: BodyRead, inflater: Transform, wireInput: LimitedInput, verdicts: InflatedVerdicts): LimitedInput {
  const { settings: { limit, inflatersAtOnce }, contentEncoding } = read
  const inflated = new LimitedInput(inflater, limit, (received) => { verdicts.refuse(errors.entityTooLarge(limit, received)) })
  const salvager = inflatersAtOnce.get(contentEncoding)
  const wirePieces = writeTo(inflater, wireInput, salvager !== undefined)
  inflater.on('error', function onInflateError (err: Error) {
    if (inflated.cut || (verdicts.cutShort() && isEndedEarly(err))) return
    const before = inflatedBeforeDamage(salvager, wirePieces, limit)
    if (before !== null && before.length > inflated.received) inflated.write(before.subarray(inflated.received))
    if (inflated.cut) return
    verdicts.refuse(err)
  })
  return inflated
}

/** The stage's fields, checked by the schema, go to `req.body` and its files to `req.files` (`variant.deliverForm`). */
function deliverStaged (read: BodyRead, result: StageResult): void {
  const { settings, req, next } = read
  const deliver = (fields: unknown): void => { settings.variant.deliverForm(req, next, fields, result.files) }
  if (settings.schema === null) {
    deliver(result.fields)
    return
  }
  validateBody(settings.schema, result.fields, function onRefused (err) {
    result.release(() => { next(err) })
  }, deliver)
}

