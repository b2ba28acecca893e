// A file part's stream that can catch a throw from its listeners where it emits (multer's storage engines listen on it).
import { Readable } from 'stream'

/**
 * A Readable whose `emit` hands a listener's throw to `onListenerThrow` when one is set. An engine's 'data' handler
 * runs on later turns too, outside any call of the reader, so the emit is the one place to catch it. Overriding
 * `emit` on the class, not on each stream: an own `emit` per instance changed the streams' shapes and made the small
 * form's warm path flip between 12 and 20 µs a request (bench, in process).
 */
export class GuardedStream extends Readable {
  /** Told of a listener's throw; null: the throw goes on, as from any stream. */
  onListenerThrow: ((thrown: unknown) => void) | null = null

  override emit (event: string | symbol, ...args: unknown[]): boolean {
    if (this.onListenerThrow === null) return super.emit(event, ...args)
    try {
      return super.emit(event, ...args)
    } catch (thrown) {
      this.onListenerThrow(thrown)
      return true
    }
  }
}
