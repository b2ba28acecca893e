// Browser-side helpers the Chromium tests and the bench inject into the playground page (as globalThis.bodykitTest).
/* global document, navigator, performance, XMLHttpRequest, fetch, Blob, Response, CompressionStream, URLSearchParams, ReadableStream, TextEncoder */
'use strict'

globalThis.bodykitTest = {
  /** Sends a Blob of `size` zero bytes (as a file upload does; or `text`) with fetch or XHR: `{ status, answer, ms }`, or status 0 and the network error. */
  async send (how, url, body) {
    const started = performance.now()
    const data = body.size !== undefined ? new Blob([new Uint8Array(body.size)]) : body.text
    const headers = { 'Content-Type': body.type }
    if (body.encoding) headers['Content-Encoding'] = body.encoding
    if (how === 'fetch') {
      try {
        const res = await fetch(url, { method: 'POST', body: data, headers })
        return { status: res.status, answer: JSON.parse(await res.text()), ms: performance.now() - started }
      } catch (err) {
        return { status: 0, error: String(err), ms: performance.now() - started }
      }
    }
    return new Promise((resolve) => {
      const xhr = new XMLHttpRequest()
      xhr.open('POST', url)
      for (const [name, value] of Object.entries(headers)) xhr.setRequestHeader(name, value)
      xhr.onload = () => resolve({ status: xhr.status, answer: JSON.parse(xhr.responseText), ms: performance.now() - started })
      xhr.onerror = () => resolve({ status: 0, error: 'XHR network error', ms: performance.now() - started })
      xhr.send(data)
    })
  },

  /**
   * Sends `text` (or `size` zero bytes) as a ReadableStream by fetch (`duplex: 'half'`): the browser does not know
   * its length, so it sends no Content-Length (Chromium streams request bodies over HTTP/2 only).
   */
  async sendStream (url, body) {
    const started = performance.now()
    const bytes = body.size !== undefined ? new Uint8Array(body.size) : new TextEncoder().encode(body.text)
    const pieceSize = Math.max(1, Math.ceil(bytes.length / (body.pieces || 1)))
    let offset = 0
    const stream = new ReadableStream({
      pull (controller) {
        if (offset >= bytes.length) {
          controller.close()
          return
        }
        controller.enqueue(bytes.slice(offset, offset + pieceSize))
        offset += pieceSize
      }
    })
    try {
      const res = await fetch(url, { method: 'POST', body: stream, duplex: 'half', headers: { 'Content-Type': body.type } })
      return { status: res.status, answer: JSON.parse(await res.text()), ms: performance.now() - started }
    } catch (err) {
      return { status: 0, error: String(err), ms: performance.now() - started }
    }
  },

  /** The protocol the page itself was loaded with (`h2`, `http/1.1`). */
  protocol () {
    return performance.getEntriesByType('navigation')[0].nextHopProtocol
  },

  /** Sends `text` compressed with CompressionStream (`gzip`, `deflate`) by fetch. */
  async sendCompressed (url, text, encoding, type) {
    const body = await new Response(new Blob([text]).stream().pipeThrough(new CompressionStream(encoding))).blob()
    const res = await fetch(url, { method: 'POST', body, headers: { 'Content-Type': type, 'Content-Encoding': encoding } })
    return { status: res.status, answer: await res.json() }
  },

  /** Sends `body` (a URLSearchParams built from pairs) by fetch: the browser sets the Content-Type. */
  async sendParams (url, pairs) {
    const res = await fetch(url, { method: 'POST', body: new URLSearchParams(pairs) })
    return { status: res.status, answer: await res.json() }
  },

  beacon (url, text, type) {
    return navigator.sendBeacon(url, new Blob([text], { type }))
  },

  async last () {
    return (await fetch('/try/last')).json()
  },

  /**
   * A real <form> post into a fresh hidden frame: `{ status, answer, ms }` from the answer the frame loaded.
   * `fields` are [name, value] pairs (repeated names allowed); `bigField` adds a field of that many characters.
   */
  form (action, fields, attributes, bigField) {
    return new Promise((resolve) => {
      const started = performance.now()
      const name = 'frame-' + Math.random().toString(36).slice(2)
      const frame = document.createElement('iframe')
      frame.name = name
      frame.style.display = 'none'
      document.body.append(frame)
      const form = document.createElement('form')
      form.method = 'post'
      form.action = action
      form.target = name
      for (const [key, value] of Object.entries(attributes)) form.setAttribute(key, value)
      const all = bigField > 0 ? [...fields, ['big', 'x'.repeat(bigField)]] : fields
      for (const [key, value] of all) {
        const input = document.createElement('input')
        input.type = 'hidden'
        input.name = key
        input.value = value
        form.append(input)
      }
      document.body.append(form)
      frame.addEventListener('load', () => {
        const doc = frame.contentDocument
        const text = doc && doc.body ? doc.body.innerText : ''
        const ms = performance.now() - started
        form.remove()
        frame.remove()
        try {
          const answer = JSON.parse(text)
          resolve({ status: answer.status, answer, ms })
        } catch {
          resolve({ status: 0, error: 'the frame loaded no answer: ' + text.slice(0, 100), ms })
        }
      })
      form.submit()
    })
  },

  /** How many answers a result box of the page has shown. */
  count (box) {
    return Number(document.querySelector(box).dataset.count || 0)
  }
}
