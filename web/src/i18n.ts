// English and Chinese labels. Chinese piece names follow the Chinese translation of the FIDE
// Laws: 王 (king), 后 (queen), 车 (rook), 象 (bishop), 马 (knight), 兵 (pawn).

export type Lang = "en" | "zh";

const en = {
  title: "Chess",
  tabPlay: "Play",
  tabAnalysis: "Analysis",
  tabReview: "Review",
  tabWatch: "Watch",
  connecting: "Connecting…",
  connected: "Connected",
  disconnected: "Connection lost, retrying…",
  version: "version",
  settings: "Settings",
  apiKey: "API key",
  apiKeyHint: "Kept in this tab's session storage only; sent as a Bearer token.",
  gateway: "Gateway address",
  gatewayHint: "Empty: this page's own server.",
  save: "Save",
  language: "Language",
  flip: "Flip board",
  moveInput: "Move (SAN, e.g. Nf3)",
  moveInputLabel: "Type a move",
  newGame: "New game",
  youPlay: "You play",
  white: "White",
  black: "Black",
  random: "Random",
  level: "Engine level",
  fullStrength: "Full strength",
  timeControl: "Time control",
  noClock: "No clock",
  start: "Start",
  resign: "Resign",
  offerDraw: "Offer draw",
  takeBack: "Take back",
  drawOffered: "Draw offered with your next move",
  claimDraw: "Claim draw",
  acceptDraw: "Accept draw",
  declineDraw: "Decline",
  engineThinking: "Engine is thinking…",
  yourMove: "Your move",
  gameOver: "Game over",
  copyPgn: "Copy PGN",
  downloadPgn: "Download PGN",
  copied: "Copied",
  gameId: "Game id",
  position: "Position",
  positionHint: "FEN, PGN, or moves from the start (e.g. e4 e5 Nf3)",
  setUp: "Set up",
  analyse: "Analyse",
  stop: "Stop",
  lines: "Lines",
  depth: "Depth",
  infinite: "no limit",
  score: "Score",
  nodes: "nodes",
  review: "Review",
  pgnText: "PGN",
  uploadPgn: "Upload PGN",
  accuracy: "Accuracy",
  acpl: "ACPL",
  moves: "Moves",
  better: "better",
  annotatedPgn: "Annotated PGN",
  watch: "Watch",
  watchHint: "The id of a game on this server",
  watching: "Watching",
  waiting: "Waiting for moves…",
  streamEnded: "The game is over.",
  reconnecting: "Stream lost, reconnecting…",
  error: "Error",
  field: "field",
  mateIn: "mate in",
  checkmate: "checkmate",
  resignation: "resignation",
  timeout: "time forfeit",
  stalemate: "stalemate",
  deadPosition: "dead position",
  cannotWinWhite: "cannot be won by White",
  cannotWinBlack: "cannot be won by Black",
  tbWhiteMates: "tables: White mates in {n}",
  tbBlackMates: "tables: Black mates in {n}",
  tbDraw: "tables: draw",
  agreement: "agreement",
  threefold: "threefold repetition",
  fivefold: "fivefold repetition",
  fifty: "fifty-move rule",
  seventyFive: "seventy-five-move rule",
  timeoutVsInsufficient: "time forfeit against insufficient material",
  whiteWins: "White wins",
  blackWins: "Black wins",
  draw: "Draw",
  choosePromotion: "Promote to",
  king: "king",
  queen: "queen",
  rook: "rook",
  bishop: "bishop",
  knight: "knight",
  pawn: "pawn",
  toMove: "to move",
  evaluation: "Evaluation",
  noLines: "No lines yet",
  judgements: "Judgements",
  judgementNames: "!! brilliant · ! good · !? interesting · ?! inaccuracy · ? mistake · ?? blunder",
  illegalMove: "Not a legal move here",
  start_position: "Start position",
  back: "Back",
  forward: "Forward",
  on: "on",
  emptySquare: "empty",
  opening: "Opening",
  engineDeclined: "The engine declined your draw offer.",
  abandonGame: "A game is in progress: abandon it (it goes on on the server, its clock running) and start a new one?",
  resumed: "Game resumed",
  checkmated: "Checkmate",
  stalemated: "Stalemate",
  drawn: "Draw",
  nextMistake: "Next mistake",
  takeback: "Takeback",
  sounds: "Sounds",
  theme: "Board theme",
  themeGreen: "Green",
  themeBrown: "Brown",
  themeContrast: "High contrast",
  phases: "Accuracy by phase",
  middlegame: "Middlegame",
  endgame: "Endgame",
  board: "Board",
};

export type Key = keyof typeof en;

const zh: Record<Key, string> = {
  title: "国际象棋",
  tabPlay: "对弈",
  tabAnalysis: "分析",
  tabReview: "复盘",
  tabWatch: "观战",
  connecting: "正在连接…",
  connected: "已连接",
  disconnected: "连接中断，正在重试…",
  version: "版本",
  settings: "设置",
  apiKey: "API 密钥",
  apiKeyHint: "仅保存在本标签页的会话存储中，以 Bearer 令牌发送。",
  gateway: "网关地址",
  gatewayHint: "留空：使用本页面所在的服务器。",
  save: "保存",
  language: "语言",
  flip: "翻转棋盘",
  moveInput: "着法（代数记谱，如 Nf3）",
  moveInputLabel: "输入着法",
  newGame: "新对局",
  youPlay: "执子",
  white: "白方",
  black: "黑方",
  random: "随机",
  level: "引擎等级",
  fullStrength: "全力",
  timeControl: "用时",
  noClock: "不计时",
  start: "开始",
  resign: "认输",
  offerDraw: "提和",
  takeBack: "悔棋",
  drawOffered: "将随下一步着法提和",
  claimDraw: "要求判和",
  acceptDraw: "同意和棋",
  declineDraw: "拒绝",
  engineThinking: "引擎思考中…",
  yourMove: "轮到你走",
  gameOver: "对局结束",
  copyPgn: "复制 PGN",
  downloadPgn: "下载 PGN",
  copied: "已复制",
  gameId: "对局编号",
  position: "局面",
  positionHint: "FEN、PGN，或从初始局面起的着法（如 e4 e5 Nf3）",
  setUp: "摆放",
  analyse: "分析",
  stop: "停止",
  lines: "变例数",
  depth: "深度",
  infinite: "不限",
  score: "评分",
  nodes: "节点",
  review: "复盘",
  pgnText: "PGN",
  uploadPgn: "上传 PGN",
  accuracy: "准确率",
  acpl: "平均损失（厘兵）",
  moves: "着法",
  better: "更好",
  annotatedPgn: "带注释的 PGN",
  watch: "观战",
  watchHint: "本服务器上的对局编号",
  watching: "正在观战",
  waiting: "等待着法…",
  streamEnded: "对局已结束。",
  reconnecting: "数据流中断，正在重连…",
  error: "错误",
  field: "字段",
  mateIn: "步杀",
  checkmate: "将杀",
  resignation: "认输",
  timeout: "超时判负",
  stalemate: "无子可动",
  deadPosition: "死局",
  cannotWinWhite: "白方无法获胜",
  cannotWinBlack: "黑方无法获胜",
  tbWhiteMates: "残局库：白方{n}步杀",
  tbBlackMates: "残局库：黑方{n}步杀",
  tbDraw: "残局库：和棋",
  agreement: "协议和棋",
  threefold: "三次重复局面",
  fivefold: "五次重复局面",
  fifty: "五十回合规则",
  seventyFive: "七十五回合规则",
  timeoutVsInsufficient: "超时但对方子力不足以将杀",
  whiteWins: "白方胜",
  blackWins: "黑方胜",
  draw: "和棋",
  choosePromotion: "升变为",
  king: "王",
  queen: "后",
  rook: "车",
  bishop: "象",
  knight: "马",
  pawn: "兵",
  toMove: "走棋",
  evaluation: "评估",
  noLines: "暂无变例",
  judgements: "评注",
  judgementNames: "!! 妙着 · ! 好棋 · !? 有趣 · ?! 欠准确 · ? 错着 · ?? 大错",
  illegalMove: "此处不是合法着法",
  start_position: "初始局面",
  back: "后退",
  forward: "前进",
  on: "在",
  emptySquare: "空",
  opening: "开局",
  engineDeclined: "引擎拒绝了你的提和。",
  abandonGame: "对局正在进行：放弃它（它在服务器上继续，时钟照走）并开始新对局？",
  resumed: "已恢复对局",
  checkmated: "将杀",
  stalemated: "无子可动（逼和）",
  drawn: "和棋",
  nextMistake: "下一个错着",
  takeback: "悔棋",
  sounds: "声音",
  theme: "棋盘主题",
  themeGreen: "绿色",
  themeBrown: "棕色",
  themeContrast: "高对比度",
  phases: "各阶段准确率",
  middlegame: "中局",
  endgame: "残局",
  board: "棋盘",
};

const tables: Record<Lang, Record<Key, string>> = { en, zh };

// The page's storage and language; absent under Node (the unit tests), where English is used.
const storage: Storage | null = typeof localStorage === "undefined" ? null : localStorage;

function initialLang(): Lang {
  const saved = storage?.getItem("chess.lang");
  if (saved === "en" || saved === "zh") return saved;
  return typeof navigator !== "undefined" && navigator.language.toLowerCase().startsWith("zh") ? "zh" : "en";
}

let lang: Lang = initialLang();
const listeners = new Set<() => void>();

export function t(key: Key): string {
  return tables[lang][key];
}

export function currentLang(): Lang {
  return lang;
}

export function setLang(next: Lang): void {
  lang = next;
  storage?.setItem("chess.lang", next);
  if (typeof document !== "undefined") document.documentElement.lang = next === "zh" ? "zh-Hans" : "en";
  for (const listener of [...listeners]) listener();
}

/** Calls `render` now and whenever the language changes, until the returned function is
 * called. Long-lived parts of the page subscribe once; text made on the fly uses labels
 * (ui.ts `tr`), which subscribe nothing. */
export function onLang(render: () => void): () => void {
  listeners.add(render);
  render();
  return () => listeners.delete(render);
}

/** How many language listeners are registered (a leak shows as a growing count). */
export function langListenerCount(): number {
  return listeners.size;
}

const CHINESE_NAMES: Record<string, string> = { K: "王", Q: "后", R: "车", B: "象", N: "马" };

/** SAN with the piece letters replaced by the Chinese piece names (王 后 车 象 马). */
export function localSan(san: string, to: Lang = lang): string {
  if (to !== "zh") return san;
  return san.replace(/[KQRBN]/g, (c) => CHINESE_NAMES[c] ?? c);
}

/** A piece and its square for screen readers: "white knight on f3". */
export function pieceLabel(color: "w" | "b", type: "k" | "q" | "r" | "b" | "n" | "p", square: string): string {
  const names = { k: "king", q: "queen", r: "rook", b: "bishop", n: "knight", p: "pawn" } as const;
  const side = color === "w" ? t("white") : t("black");
  return lang === "zh" ? `${side}${t(names[type])} ${square}` : `${side.toLowerCase()} ${t(names[type])} ${t("on")} ${square}`;
}
