// Settings kept in localStorage: the board theme (green, brown, high contrast) and move
// sounds (off by default).

export type Theme = "green" | "brown" | "contrast";
export const THEMES: Theme[] = ["green", "brown", "contrast"];

const THEME = "chess.theme";
const SOUNDS = "chess.sounds";

export function theme(): Theme {
  const saved = localStorage.getItem(THEME);
  return THEMES.includes(saved as Theme) ? (saved as Theme) : "green";
}

export function setTheme(next: Theme): void {
  localStorage.setItem(THEME, next);
  document.documentElement.dataset.theme = next;
}

export function sounds(): boolean {
  return localStorage.getItem(SOUNDS) === "on";
}

export function setSounds(on: boolean): void {
  localStorage.setItem(SOUNDS, on ? "on" : "off");
}

let audio: AudioContext | null = null;

/** A short click for a move, when sounds are on. */
export function moveSound(): void {
  if (!sounds()) return;
  try {
    audio ??= new AudioContext();
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.frequency.value = 520;
    gain.gain.setValueAtTime(0.15, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.08);
    osc.connect(gain).connect(audio.destination);
    osc.start();
    osc.stop(audio.currentTime + 0.09);
    document.body.dataset.sounds = String(Number(document.body.dataset.sounds ?? 0) + 1);
  } catch {
    // No audio here: silence.
  }
}

document.documentElement.dataset.theme = theme();
