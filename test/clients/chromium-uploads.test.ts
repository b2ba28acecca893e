// Issue 9: 5 MiB uploads to the playground's 1 KB route by Chromium's fetch, XHR and form post: the page receives the 413, as with body-parser.
import { it } from 'node:test'
import { describeChromium, uploadTooLarge } from './chromium-harness'

describeChromium('headless Chromium: 5 MiB over the limit', (_entry, same) => {
  for (const how of ['fetch', 'xhr', 'form'] as const) {
    it(`a 5 MiB upload by ${how} to the 1 KB route: the page receives the 413, not a network error`, () => uploadTooLarge(same, how, 5 * 1024 * 1024))
  }
})
