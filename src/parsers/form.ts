// Linear-time port of qs 6.17 `parse` for the option subset the urlencoded parser passes; used for large forms.
//
// Why: qs combines duplicate keys with `[].concat` and merges arrays with `countElements` and `forEach` over
// sparse arrays, all O(n) per parameter, so 20,000 `a[]=` pairs take seconds. This is the same algorithm
// (parseValues, splitKeyIntoSegments, parseObject, merge, compact) over an internal tree whose arrays are
// index -> value maps with a known element count, so each parameter costs O(1) per key segment (plus one sort
// per array whose indices arrived out of order). Quirks are kept on purpose, including the overflow and
// strictMerge-conflict marks qs keeps in side channels; test/parsers/form.test.ts compares against qs itself.

/** The qs options bodykit passes; any other qs option is taken at its default. */
export interface FormOptions {
  depth: number
  strictDepth: true
  allowPrototypes: true
  parameterLimit: number
  arrayLimit: number
  charset?: 'utf-8' | 'iso-8859-1'
  charsetSentinel?: boolean
  interpretNumericEntities?: boolean
}

/** qs's sparse array: `length` is the highest index plus one, `items.size` its element count. */
class Arr {
  readonly items = new Map<number, Value>()
  length = 0
  /** Whether `items` iterates in index order (it does while indices only grow). */
  sorted = true
  /** Set on the `[target, source]` pair of a strictMerge conflict. */
  conflict = false

  set (index: number, value: Value): void {
    if (index < this.length && !this.items.has(index)) this.sorted = false
    this.items.set(index, value)
    if (index >= this.length) this.length = index + 1
  }

  entries (): Iterable<[number, Value]> {
    return this.sorted ? this.items : [...this.items].sort((a, b) => a[0] - b[0])
  }
}

/** A plain object; `props` keeps insertion order, which materialising replays into a real object. */
class Obj {
  readonly props = new Map<string, Value>()
  /** qs `markOverflow`: an array that went past arrayLimit, with its highest numeric index. */
  overflow: number | undefined = undefined
  /** qs `markConflict`: a conflict pair turned object, with its highest numeric index. */
  conflict: number | undefined = undefined
}

type Value = string | Arr | Obj

const isoSentinel = 'utf8=%26%2310003%3B'
const utf8Sentinel = 'utf8=%E2%9C%93'

/**
 * Parses a urlencoded body exactly as `qs.parse(body, options)` (qs 6.17) does, in time linear in its size.
 * Throws the same RangeError as qs when a key nests deeper than `depth`.
 */
export function parseFormLinear (body: string, options: FormOptions): Record<string, unknown> {
  // Option defaults and coercions as in qs's normalizeParseOptions.
  const depth = typeof options.depth === 'number' || (options.depth as unknown) === false ? +options.depth : 5
  const limit = typeof options.arrayLimit === 'number' ? options.arrayLimit : 20
  const parameterLimit = typeof options.parameterLimit === 'number' ? options.parameterLimit : 1000
  const entities = options.interpretNumericEntities === true
  let charset = options.charset ?? 'utf-8'
  if (body === '') return {}

  const parts = body.replace(/%5B/gi, '[').replace(/%5D/gi, ']')
    .split('&', parameterLimit === Infinity ? undefined : parameterLimit)
  let skip = -1
  if (options.charsetSentinel === true) {
    skip = parts.findIndex((part) => part.startsWith('utf8='))
    if (parts[skip] === utf8Sentinel) charset = 'utf-8'
    else if (parts[skip] === isoSentinel) charset = 'iso-8859-1'
  }

  // parseValues: duplicates are appended in place where qs re-concatenates the whole array.
  const values: Record<string, string | string[] | Obj> = Object.create(null)
  for (let i = 0; i < parts.length; i++) {
    if (i === skip) continue
    const part = parts[i]
    const bracketEquals = part.indexOf(']=')
    const pos = bracketEquals === -1 ? part.indexOf('=') : bracketEquals + 1
    const key = decode(pos === -1 ? part : part.slice(0, pos), charset)
    let val = pos === -1 ? '' : decode(part.slice(pos + 1), charset)
    if (val && entities && charset === 'iso-8859-1') val = interpretNumericEntities(val)
    const previous = values[key]
    if (previous === undefined) {
      values[key] = val
    } else if (previous instanceof Obj) {
      previous.overflow = previous.overflow as number + 1
      previous.props.set(String(previous.overflow), val)
    } else {
      const list = typeof previous === 'string' ? [previous] : previous
      list.push(val)
      values[key] = list.length > limit ? overflowObject(arrayOf(list), list.length - 1) : list
    }
  }

  const root = new Obj()
  for (const key of Object.keys(values)) {
    if (!key) continue
    const raw = values[key]
    merge(root, buildChain(splitKey(key, depth), Array.isArray(raw) ? arrayOf(raw) : raw, limit), limit)
  }
  return materialise(root) as Record<string, unknown>
}

/** qs `utils.decode`. */
function decode (str: string, charset: string): string {
  if (str.indexOf('%') === -1) return str.indexOf('+') === -1 ? str : str.replace(/\+/g, ' ')
  const withoutPlus = str.replace(/\+/g, ' ')
  if (charset === 'iso-8859-1') return withoutPlus.replace(/%[0-9a-f]{2}/gi, unescape)
  try {
    return decodeURIComponent(withoutPlus)
  } catch {
    return withoutPlus
  }
}

/** qs 6.17 `interpretNumericEntities` (astral code points become surrogate pairs). */
function interpretNumericEntities (str: string): string {
  return str.replace(/&#(\d+);/g, (_, digits: string) => {
    let code = parseInt(digits, 10)
    if (code > 0xFFFF && code <= 0x10FFFF) {
      code -= 0x10000
      return String.fromCharCode(0xD800 | (code >> 10), 0xDC00 | (code & 0x3FF))
    }
    return String.fromCharCode(code)
  })
}

/** qs `splitKeyIntoSegments` with allowDots off and allowPrototypes and strictDepth on. */
function splitKey (key: string, depth: number): string[] {
  if (depth <= 0) return [key]
  const segments: string[] = []
  const first = key.indexOf('[')
  const parent = first >= 0 ? key.slice(0, first) : key
  if (parent) segments.push(parent)
  let open = first
  let collected = 0
  while (open >= 0 && collected < depth) {
    // The group runs to the `]` that balances its `[`.
    let level = 1
    let close = -1
    for (let i = open + 1; i < key.length && close < 0; i++) {
      const code = key.charCodeAt(i)
      if (code === 0x5B) level++
      else if (code === 0x5D && --level === 0) close = i
    }
    if (close < 0) {
      segments.push('[' + key.slice(open) + ']')
      return segments
    }
    segments.push(key.slice(open, close + 1))
    collected++
    open = key.indexOf('[', close + 1)
  }
  if (open >= 0) throw new RangeError('Input depth exceeded depth option of ' + depth + ' and strictDepth is true')
  return segments
}

/** qs `parseObject`: the single-path tree a key stands for, built from the leaf up. */
function buildChain (chain: string[], value: Value, limit: number): Value {
  let leaf = value
  for (let i = chain.length - 1; i >= 0; i--) {
    const root = chain[i]
    if (root === '[]') {
      // `utils.combine([], leaf)`: an overflow object passes through, an array is copied (holes included).
      if (leaf instanceof Obj && leaf.overflow !== undefined) continue
      const array = new Arr()
      if (leaf instanceof Arr) {
        for (const [index, item] of leaf.entries()) array.set(index, item)
      } else {
        array.set(0, leaf)
      }
      leaf = array.length > limit ? overflowObject(array, array.length - 1) : array
      continue
    }
    const clean = root.charAt(0) === '[' && root.charAt(root.length - 1) === ']' ? root.slice(1, -1) : root
    const index = parseInt(clean, 10)
    const isIndex = !isNaN(index) && root !== clean && String(index) === clean && index >= 0
    if (isIndex && index < limit) {
      const array = new Arr()
      array.set(index, leaf)
      leaf = array
    } else {
      const obj = new Obj()
      // qs drops a `__proto__` segment, leaving an empty object.
      if (isIndex || clean !== '__proto__') obj.props.set(clean, leaf)
      if (isIndex) obj.overflow = index
      leaf = obj
    }
  }
  return leaf
}

/** A dense array from parseValues' duplicates. */
function arrayOf (list: string[]): Arr {
  const array = new Arr()
  for (let i = 0; i < list.length; i++) array.set(i, list[i])
  return array
}

/** qs `arrayToObject`: the elements in index order under string keys. */
function toObject (array: Arr): Obj {
  const obj = new Obj()
  for (const [index, item] of array.entries()) obj.props.set(String(index), item)
  return obj
}

/** qs `markOverflow(arrayToObject(array), maxIndex)`. */
function overflowObject (array: Arr, maxIndex: number): Obj {
  const obj = toObject(array)
  obj.overflow = maxIndex
  return obj
}

/** qs `limitedPair`, marked as a conflict when strictMerge wrapped an object. */
function pair (first: Value, second: Value, limit: number, conflict: boolean): Value {
  const array = new Arr()
  array.set(0, first)
  array.set(1, second)
  if (array.length > limit) return overflowObject(array, 1)
  array.conflict = conflict
  return array
}

/** qs `utils.merge` with strictMerge, allowPrototypes and no plainObjects; may mutate `target`. */
function merge (target: Value, source: Value, limit: number): Value {
  if (source === '') return target

  if (typeof source === 'string') {
    if (target instanceof Arr) {
      if (target.items.size >= limit) {
        const obj = overflowObject(target, target.length)
        obj.props.set(String(target.length), source)
        return obj
      }
      target.set(target.length, source)
    } else if (target instanceof Obj) {
      if (target.overflow !== undefined) {
        target.props.set(String(++target.overflow), source)
      } else if (target.conflict !== undefined) {
        target.props.set(String(++target.conflict), source)
      } else {
        return pair(target, source, limit, true)
      }
    } else {
      return pair(target, source, limit, false)
    }
    return target
  }

  if (typeof target === 'string') {
    if (source instanceof Obj && source.overflow !== undefined) {
      const obj = new Obj()
      obj.props.set('0', target)
      for (const [key, item] of source.props) obj.props.set(String(parseInt(key, 10) + 1), item)
      obj.overflow = source.overflow + 1
      return obj
    }
    // `[target].concat(source)`
    const array = new Arr()
    array.set(0, target)
    if (source instanceof Arr) {
      for (const [index, item] of source.entries()) array.set(index + 1, item)
    } else {
      array.set(1, source)
    }
    return array.length > limit ? overflowObject(array, array.length - 1) : array
  }

  if (target instanceof Arr && source instanceof Arr) {
    for (const [index, item] of source.entries()) {
      const existing = target.items.get(index)
      if (existing === undefined) target.set(index, item)
      else if (typeof existing !== 'string' && typeof item !== 'string') target.items.set(index, merge(existing, item, limit))
      else target.set(target.length, item)
    }
    return target.items.size > limit ? overflowObject(target, target.length - 1) : target
  }

  let acc: Obj
  if (target instanceof Arr) {
    acc = toObject(target)
    if (target.conflict) acc.conflict = target.length - 1
  } else {
    acc = target
  }
  // Sources come from buildChain, so their iteration order is already Object.keys order.
  const entries: Iterable<[string | number, Value]> = source instanceof Arr ? source.entries() : source.props
  const sourceOverflow = source instanceof Obj ? source.overflow : undefined
  for (const [rawKey, item] of entries) {
    const key = String(rawKey)
    const existing = acc.props.get(key)
    acc.props.set(key, existing === undefined ? item : merge(existing, item, limit))
    if (sourceOverflow !== undefined && acc.overflow === undefined) acc.overflow = maxNumericIndex(acc, sourceOverflow)
    const index = parseInt(key, 10)
    if (String(index) !== key) continue
    if (acc.overflow !== undefined && index >= 0 && index > acc.overflow) acc.overflow = index
    if (acc.conflict !== undefined && index > acc.conflict) acc.conflict = index
  }
  return acc
}

/** qs `maxNumericIndex`: runs once per object, when it first becomes an overflow object. */
function maxNumericIndex (obj: Obj, min: number): number {
  let max = min
  for (const key of obj.props.keys()) {
    const index = parseInt(key, 10)
    if (String(index) === key && index > max) max = index
  }
  return max
}

/** Builds the result, compacting arrays as qs `compact` does; iterative so deep keys cannot overflow the stack. */
function materialise (root: Value): unknown {
  const shell = (node: Value): unknown => typeof node === 'string' ? node : node instanceof Arr ? [] : {}
  const out = shell(root)
  const stack: [Value, unknown][] = [[root, out]]
  while (stack.length > 0) {
    const [node, target] = stack.pop() as [Value, unknown]
    if (node instanceof Arr) {
      for (const [, item] of node.entries()) {
        const child = shell(item)
        ;(target as unknown[]).push(child)
        if (typeof item !== 'string') stack.push([item, child])
      }
    } else if (node instanceof Obj) {
      for (const [key, item] of node.props) {
        const child = shell(item)
        // Defined, not assigned, so a `__proto__` key can never reach the prototype setter.
        if (key === '__proto__') Object.defineProperty(target, key, { value: child, enumerable: true, writable: true, configurable: true })
        else (target as Record<string, unknown>)[key] = child
        if (typeof item !== 'string') stack.push([item, child])
      }
    }
  }
  return out
}
