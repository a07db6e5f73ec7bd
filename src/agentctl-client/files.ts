/**
 * Files of an instance's workspace (paths are relative to the workspace and confined to it).
 * @module
 */
import { FileContentSchema, FileTreeSchema, WriteFileResponseSchema, instanceRoutes } from '../protocol/index.js';
import type { FileTree, WriteFileRequest, WriteFileResponse } from '../protocol/index.js';
import { base64ToBytes, bytesToBase64, bytesToText } from './base64.js';
import { ProtocolError } from './errors.js';
import type { CallOptions, HttpTransport } from './http.js';

interface TreeOptions extends CallOptions {
  /** Directory to list, relative to the workspace. @default "." */
  readonly path?: string;
  /** Levels to descend (max 32). @default 1 */
  readonly depth?: number;
}

interface WriteFileOptions extends CallOptions {
  /** File mode, e.g. 0o644. */
  readonly mode?: number;
  /** Create missing parent directories. @default true */
  readonly mkdirs?: boolean;
}

interface DeleteFileOptions extends CallOptions {
  /** Required to delete a directory with its contents. @default false */
  readonly recursive?: boolean;
}

/** `InstanceClient.files`: tree, read, write and delete. */
export class FilesClient {
  constructor(private readonly transport: HttpTransport) {}

  /** Lists a directory. */
  tree(options: TreeOptions = {}): Promise<FileTree> {
    return this.transport.request(
      {
        method: 'GET',
        path: instanceRoutes.filesTree,
        query: { path: options.path, depth: options.depth },
        schema: FileTreeSchema,
        idempotent: true,
      },
      options,
    );
  }

  /** Reads a file's bytes (at most LIMITS.maxFileReadBytes; larger files fail with `file_too_large`). */
  async readFile(path: string, options: CallOptions = {}): Promise<Uint8Array> {
    const content = await this.transport.request(
      { method: 'GET', path: instanceRoutes.filesContent, query: { path }, schema: FileContentSchema, idempotent: true },
      options,
    );
    try {
      return base64ToBytes(content.content);
    } catch (err) {
      throw new ProtocolError({ method: 'GET', path: instanceRoutes.filesContent }, 'file content is not base64', {
        cause: err,
      });
    }
  }

  /** Reads a file as UTF-8 text (invalid sequences become U+FFFD). */
  async readTextFile(path: string, options: CallOptions = {}): Promise<string> {
    return bytesToText(await this.readFile(path, options));
  }

  /**
   * Writes a file atomically (text as UTF-8, bytes as given). Retried on transient failures:
   * writing the same content again has the same result.
   */
  writeFile(path: string, content: string | Uint8Array, options: WriteFileOptions = {}): Promise<WriteFileResponse> {
    const body: WriteFileRequest =
      typeof content === 'string'
        ? { path, content, encoding: 'utf8' }
        : { path, content: bytesToBase64(content), encoding: 'base64' };
    if (options.mode !== undefined) body.mode = options.mode;
    if (options.mkdirs !== undefined) body.mkdirs = options.mkdirs;
    return this.transport.request(
      { method: 'PUT', path: instanceRoutes.filesContent, body, schema: WriteFileResponseSchema, idempotent: true },
      options,
    );
  }

  /** Deletes a file (or a directory with `recursive`); a 404 after a retried attempt counts as done. */
  deleteFile(path: string, options: DeleteFileOptions = {}): Promise<void> {
    return this.transport.request(
      {
        method: 'DELETE',
        path: instanceRoutes.filesContent,
        query: { path, recursive: options.recursive === true ? 'true' : undefined },
        idempotent: true,
        notFoundAfterRetryIsSuccess: true,
      },
      options,
    );
  }
}
