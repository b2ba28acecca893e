// Issue 9: 50 MiB uploads to the playground's 1 KB route by Chromium's fetch and XHR receive the 413, as with body-parser (a file of its own: they cost seconds).
import { it } from 'node:test'
import { describeChromium, uploadTooLarge } from './chromium-harness'

describeChromium('headless Chromium: 50 MiB over the limit', (_entry, same) => {
  for (const how of ['fetch', 'xhr'] as const) {
    it(`a 50 MiB upload by ${how} to the 1 KB route: the page receives the 413, not a network error`, () => uploadTooLarge(same, how, 50 * 1024 * 1024))
  }
})
