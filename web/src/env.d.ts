// Vite bundles CSS imported from TypeScript.
declare module "*.css";
