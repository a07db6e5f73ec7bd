/** A modal confirmation (native <dialog>: focus moves in, Escape cancels, focus returns). @module */
import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

export function ConfirmDialog(props: {
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}): JSX.Element {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current!;
    const opener = document.activeElement as HTMLElement | null;
    if (!d.open) d.showModal();
    d.querySelector<HTMLButtonElement>('[data-testid="confirm-no"]')?.focus();
    return () => opener?.focus();
  }, []);
  return (
    <dialog
      ref={ref}
      class="dialog"
      data-testid="confirm-dialog"
      aria-labelledby="confirm-title"
      aria-describedby="confirm-text"
      onCancel={(e) => {
        e.preventDefault();
        props.onCancel();
      }}
    >
      <h2 id="confirm-title">{props.title}</h2>
      <div id="confirm-text" data-testid="confirm-text">
        {props.children}
      </div>
      <div class="actions">
        <button type="button" class="button" data-testid="confirm-no" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class={`button ${props.danger ? 'danger' : 'primary'}`} data-testid="confirm-yes" onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
