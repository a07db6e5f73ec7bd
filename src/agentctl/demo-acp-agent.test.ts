import { describe, expect, it } from 'vitest';
import { fileToWrite } from './demo-acp-agent.js';

describe('demo ACP agent', () => {
  it('finds the file a prompt asks to write', () => {
    expect(fileToWrite('please write NOTES.md')).toBe('NOTES.md');
    expect(fileToWrite('edit docs/intro.txt now')).toBe('docs/intro.txt');
    expect(fileToWrite('look at src/main.ts')).toBe('src/main.ts');
    expect(fileToWrite('write something nice')).toBeNull();
    expect(fileToWrite('just talk')).toBeNull();
  });
});
