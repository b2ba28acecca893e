// multer's field names: `a[b][]` nested into `req.body` as multer's append-field nests it, its opt-in limits, and
// the WHATWG escapes it reverses; each step in linear time, whatever the name.

/** One step of a bracket path: a key into an object or an index into an array. */
interface PathStep {
  readonly key: string | number
  /** The container the next step walks into. */
  nextType?: 'array' | 'object'
  /** `[]` at the end: the value is pushed onto an array. */
  append?: boolean
  last?: boolean
}

const DIGIT_STEP = /\[(\d+)\]/y
const NAMED_STEP = /\[([^\]]+)\]/y

/** The steps of a field name; a name that is not a well-formed bracket path is one literal key. */
function parsePath (name: string): PathStep[] {
  const literal = (): PathStep[] => [{ key: name, last: true }]
  const bracket = name.indexOf('[')
  const first = bracket === -1 ? name : name.slice(0, bracket)
  if (first === '') return literal()
  let tail: PathStep = { key: first }
  const steps = [tail]
  let pos = first.length
  while (pos < name.length) {
    if (name.charCodeAt(pos) === 0x5b && name.charCodeAt(pos + 1) === 0x5d) {
      // `[]` only ends a name.
      tail.append = true
      pos += 2
      if (pos !== name.length) return literal()
      continue
    }
    // Sticky matches from `pos`: no copy of the rest of the name per step (10,000 steps stay linear).
    DIGIT_STEP.lastIndex = pos
    let match = DIGIT_STEP.exec(name)
    if (match !== null) {
      tail.nextType = 'array'
      tail = { key: parseInt(match[1], 10) }
    } else {
      NAMED_STEP.lastIndex = pos
      match = NAMED_STEP.exec(name)
      if (match === null) return literal()
      tail.nextType = 'object'
      tail = { key: match[1] }
    }
    steps.push(tail)
    pos += match[0].length
  }
  tail.last = true
  return steps
}

type Container = Record<string | number, unknown>

/** Adds a field to `body` (a null-prototype object) under its name; throws (RangeError) where an array cannot grow. */
export function appendField (body: Container, name: string, value: unknown): void {
  let context = body
  for (const step of parsePath(name)) {
    context = step.last === true ? setLast(context, step, value) : walkInto(context, step)
  }
}

function kindOf (value: unknown): 'undefined' | 'array' | 'object' | 'scalar' {
  if (value === undefined) return 'undefined'
  if (Array.isArray(value)) return 'array'
  return typeof value === 'object' ? 'object' : 'scalar'
}

/** The value at the last step: set, appended to an array, or turned into an array of the two. */
function setLast (context: Container, step: PathStep, value: unknown): Container {
  const current = context[step.key]
  switch (kindOf(current)) {
    case 'undefined':
      context[step.key] = step.append === true ? [value] : value
      break
    case 'array':
      (current as unknown[]).push(value)
      break
    case 'object':
      // compat(multer): a value given to a name that already holds an object goes under the key ''.
      return setLast(current as Container, { key: '', last: true }, value)
    default:
      context[step.key] = [current, value]
  }
  return context
}

/** The container the next step walks into, made or converted as needed. */
function walkInto (context: Container, step: PathStep): Container {
  const current = context[step.key]
  switch (kindOf(current)) {
    case 'undefined': {
      const made = step.nextType === 'array' ? [] : Object.create(null)
      context[step.key] = made
      return made
    }
    case 'object':
      return current as Container
    case 'array':
      return step.nextType === 'array' ? current as Container : toObject(current as unknown[], context, step.key)
    default: {
      const made = Object.create(null)
      made[''] = current
      context[step.key] = made
      return made
    }
  }
}

/**
 * An array addressed by a named step becomes an object of its elements. Security (multer CVE-2026-82333): only
 * the indexes that hold a value are visited, so `items[4294967294]` then `items[x]` costs two steps, not 2^32.
 */
function toObject (array: unknown[], context: Container, key: string | number): Container {
  const made: Container = Object.create(null)
  for (const index of Object.keys(array)) {
    if (isArrayIndex(index) && array[index as unknown as number] !== undefined) made[index] = array[index as unknown as number]
  }
  context[key] = made
  return made
}

function isArrayIndex (key: string): boolean {
  const index = Number(key)
  return String(index) === key && index < 4294967295
}

/** Whether a name nests deeper than `depth` (multer counts its `[`). */
export function exceedsNesting (name: string, depth: number): boolean {
  let count = 0
  for (let pos = name.indexOf('['); pos !== -1; pos = name.indexOf('[', pos + 1)) {
    if (++count > depth) return true
  }
  return false
}

const INDEX_IN_NAME = /\[(\d+)\]/g

/** Whether a name is not a bracket path (so it is stored under itself). */
function isLiteral (name: string): boolean {
  return name.indexOf('[') !== -1 && parsePath(name)[0].key === name
}

/** Whether a name that is a bracket path holds an index `[n]` above `limit`. */
export function exceedsArrayIndex (name: string, limit: number): boolean {
  // compat(multer): a name that append-field reads as a literal key builds no array; multer's test of that
  // also passes a name whose path is followed by one final line feed.
  const path = name.endsWith('\n') ? name.slice(0, -1) : name
  if (isLiteral(path)) return false
  INDEX_IN_NAME.lastIndex = 0
  for (let match = INDEX_IN_NAME.exec(name); match !== null; match = INDEX_IN_NAME.exec(name)) {
    if (Number(match[1]) > limit) return true
  }
  return false
}

const FORM_ESCAPE = /%0A|%0D|%22/gi

/**
 * The WHATWG form encoding escapes LF, CR and `"` in names as `%0A`, `%0D` and `%22`; only these are reversed
 * (a bare `%` is never escaped, so `50%.pdf` stays as sent).
 */
export function decodeFormName (name: string): string {
  if (name.indexOf('%') === -1) return name
  return name.replace(FORM_ESCAPE, (escape) => escape === '%22' ? '"' : escape.toUpperCase() === '%0A' ? '\n' : '\r')
}
