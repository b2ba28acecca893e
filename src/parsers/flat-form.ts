// Fast path for the common form: no brackets, utf-8, so qs's result is a flat object built in one pass.

// Brackets (raw or percent-encoded, which qs turns back into brackets before decoding) are what make qs
// nest; a body without them can be parsed flat.
const NESTING = /[[\]]|%5[bd]/i

/**
 * Whether {@link parseFlatForm} gives exactly qs's result for this body. It does for utf-8 bodies without
 * brackets, at any depth: keys are then single segments, and a key cannot hold more values than there are
 * parameters, which is at most `arrayLimit` in both modes, so qs never turns a value list into an object.
 */
export function isFlatForm (body: string): boolean {
  return !NESTING.test(body)
}

/** qs's decoder for utf-8: `+` is a space, and a malformed escape leaves the text as it is. */
function decodeComponent (text: string): string {
  if (text.indexOf('%') === -1) return text.indexOf('+') === -1 ? text : text.replace(/\+/g, ' ')
  const spaced = text.replace(/\+/g, ' ')
  try {
    return decodeURIComponent(spaced)
  } catch {
    return spaced
  }
}

/**
 * Parses `a=1&b=2&a=3` into `{ a: ['1', '3'], b: '2' }` as qs does with bodykit's options: empty keys and
 * `__proto__` are dropped, duplicates become arrays, a pair without `=` has the value `''`.
 */
export function parseFlatForm (body: string): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {}
  let start = 0
  while (start <= body.length) {
    let end = body.indexOf('&', start)
    if (end === -1) end = body.length
    const equals = body.indexOf('=', start)
    const hasValue = equals !== -1 && equals < end
    const key = decodeComponent(body.slice(start, hasValue ? equals : end))
    addFlatPair(result, key, hasValue ? decodeComponent(body.slice(equals + 1, end)) : '')
    start = end + 1
  }
  return result
}

/** Adds one decoded pair as qs does: an empty key and `__proto__` are dropped, a repeated key's values become an array. */
export function addFlatPair (result: Record<string, string | string[]>, key: string, value: string): void {
  // Security: `__proto__` is never assigned (it would replace the prototype); qs drops it too.
  if (key === '' || key === '__proto__') return
  if (!Object.hasOwn(result, key)) {
    result[key] = value
    return
  }
  const existing = result[key]
  if (Array.isArray(existing)) existing.push(value)
  else result[key] = [existing, value]
}
