// Minimal typings for the part of autocannon's programmatic API the end-to-end section uses.
declare module 'autocannon' {
  function autocannon (options: autocannon.Options): Promise<autocannon.Result>
  namespace autocannon {
    interface Options {
      url: string
      method?: string
      headers?: Record<string, string>
      body?: string | Buffer
      connections?: number
      duration?: number
    }
    interface Result {
      duration: number
      errors: number
      timeouts: number
      non2xx: number
      '2xx': number
    }
  }
  export = autocannon
}
