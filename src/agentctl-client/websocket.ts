/**
 * The WebSocket seam of the client: a minimal socket shape that both the `ws` package and the
 * browser's WebSocket satisfy, and the default factory (the `ws` package, loaded on first use).
 * @module
 */

/** The parts of a WebSocket the stream reader uses (a subset of the WHATWG interface). */
export interface WebSocketLike {
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  close(code?: number, reason?: string): void;
  /** Sends a text frame (used by process attachments; the output stream never sends). */
  send(data: string): void;
  /**
   * Stops reading from the network until `resume()` (the `ws` package has both; a browser
   * WebSocket has neither, and a reader that falls behind there is cut and re-dials instead).
   */
  pause?(): void;
  resume?(): void;
}

/**
 * Opens a socket to `url` sending `headers` on the upgrade request. The default (the `ws` package)
 * sends them; a browser WebSocket cannot, so a dashboard supplies its own factory and auth scheme.
 */
export type WebSocketFactory = (url: string, init: { readonly headers: Readonly<Record<string, string>> }) => WebSocketLike;

interface WsModule {
  WebSocket?: new (url: string, options: { headers: Record<string, string> }) => WebSocketLike;
}

let defaultFactory: Promise<WebSocketFactory> | undefined;

/**
 * The `ws` package's WebSocket, imported on first use. Node 20 has no global WebSocket, and the
 * global one in later versions cannot send the Authorization header, so `ws` is the default.
 */
export function loadDefaultWebSocketFactory(): Promise<WebSocketFactory> {
  // A variable specifier keeps browser bundlers from pulling `ws` into the dashboard.
  const specifier = 'ws';
  defaultFactory ??= (import(specifier) as Promise<WsModule & { default?: WsModule }>).then(
    (mod) => {
      const Ctor = mod.WebSocket ?? mod.default?.WebSocket;
      if (Ctor === undefined) throw new TypeError('the "ws" package has no WebSocket export');
      return (url, init) => new Ctor(url, { headers: { ...init.headers } });
    },
    (err: unknown) => {
      defaultFactory = undefined;
      throw new TypeError('no WebSocket factory given and the "ws" package could not be loaded', { cause: err });
    },
  );
  return defaultFactory;
}

/** The text of a message event's data (string, ArrayBuffer, typed array or Node Buffer). */
export function messageText(data: unknown): string {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return new TextDecoder().decode(data);
  if (ArrayBuffer.isView(data)) {
    return new TextDecoder().decode(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
  }
  if (Array.isArray(data)) {
    // `ws` may deliver fragmented binary frames as Buffer[]
    return data.map((part) => messageText(part)).join('');
  }
  throw new TypeError('unsupported WebSocket message data');
}
