// Drawn bodies and splits: the prototype (a) against busboy; prints the count of disagreements and the first few.
/* global TextDecoder, URL */
import { createRequire } from 'node:module'
import { createPartReader } from './handwritten.mjs'
const busboy = createRequire(new URL('../../../package.json', import.meta.url))('busboy')
const RUNS = Number(process.argv[2] ?? 3000)
let seed = 42
const rnd = (n) => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n }
const FRAGS = ['--XB', '\r\n--XB', '\r\n--XB--', '\r\n', '\r', '\n', '-', 'Content-Disposition: form-data; name="a"', 'Content-Disposition: form-data; name="f"; filename="p/x.txt"', "Content-Disposition: form-data; name=b; filename*=UTF-8''%C3%A9", 'Content-Type: application/octet-stream', 'Content-Type: text/plain; charset=utf-8', '\r\n\r\n', 'value', ' ', 'X', '\xe9', ':', 'X-A: b']
const dec = new TextDecoder()
function draw () {
  let s = rnd(3) === 0 ? '' : '--XB\r\n'
  const n = 1 + rnd(14)
  for (let i = 0; i < n; i++) s += FRAGS[rnd(FRAGS.length)]
  if (rnd(2)) s += '\r\n--XB--\r\n'
  return Uint8Array.from(s, (c) => c.charCodeAt(0) & 0xff)
}
function split (body) { const cuts = []; const k = rnd(4); for (let i = 0; i < k; i++) cuts.push(rnd(body.length + 1)); cuts.sort((a, b) => a - b); const out = []; let p = 0; for (const c of [...cuts, body.length]) { out.push(body.subarray(p, c)); p = c } return out }
function oracle (chunks) {
  return new Promise((resolve) => {
    const parts = []; let done = false
    const bb = busboy({ headers: { 'content-type': 'multipart/form-data; boundary=XB' }, defParamCharset: 'utf8' })
    bb.on('field', (name, val) => parts.push(`${name}=${JSON.stringify(val)}`))
    bb.on('file', (name, st, info) => { const b = []; st.on('data', (d) => b.push(d)); st.on('end', () => parts.push(`${name}[${info.filename}]=${JSON.stringify(dec.decode(Buffer.concat(b)))}`)) })
    bb.on('error', () => { if (!done) { done = true; resolve({ parts, error: true }) } })
    bb.on('close', () => { if (!done) { done = true; resolve({ parts, error: false }) } })
    for (const c of chunks) bb.write(Buffer.from(c)); bb.end()
  })
}
function mine (chunks) {
  return new Promise((resolve) => {
    const parts = []
    const r = createPartReader({ boundary: 'XB', limits: { parts: Infinity, fieldSize: Infinity }, onPart: (info) => { const b = []; return { data: (x) => b.push(x.slice()), end: () => { const all = new Uint8Array(b.reduce((n, x) => n + x.length, 0)); let at = 0; for (const x of b) { all.set(x, at); at += x.length } parts.push(info.filename === undefined && info.mimeType !== 'application/octet-stream' ? `${info.name}=${JSON.stringify(dec.decode(all))}` : `${info.name}[${info.filename}]=${JSON.stringify(dec.decode(all))}`) } } }, onDone: (err) => resolve({ parts, error: err !== null, type: err?.type }) })
    for (const c of chunks) r.write(c); r.end()
  })
}
let bad = 0; let bugs = 0; const shown = []; const splitBad = new Set()
for (let i = 0; i < RUNS; i++) {
  const body = draw()
  const a = await oracle([body]); const b = await mine(split(body)); const b1 = await mine([body])
  if (b.type === 'multipart.reader.bug') bugs++
  if (JSON.stringify(b) !== JSON.stringify(b1)) splitBad.add(i)
  if (JSON.stringify(a.parts) !== JSON.stringify(b.parts) || a.error !== b.error) { bad++; if (shown.length < 4) shown.push({ body: dec.decode(body), busboy: a, mine: b }) }
}
console.log(JSON.stringify({ runs: RUNS, disagreements: bad, untypedThrows: bugs, answerDependsOnSplit: splitBad.size }), '\n', JSON.stringify(shown, null, 1).slice(0, 3000))
