import { LoginInputSchema } from "../../../shared/auth.ts";
import { clearSessionCookie, setSessionCookie } from "../../http/session-cookie.ts";
import { authedProcedure, publicProcedure, router } from "../../trpc/trpc.ts";
import { login, logout } from "./auth.service.ts";

export const authRouter = router({
  login: publicProcedure.input(LoginInputSchema).mutation(async ({ ctx, input }) => {
    const result = await login(
      { db: ctx.db, config: ctx.config, limiter: ctx.loginLimiter },
      { ...input, ip: ctx.ip, userAgent: ctx.userAgent },
    );
    if (ctx.req && ctx.res) setSessionCookie(ctx.req, ctx.res, ctx.config, result.token, result.expiresAt);
    return { token: result.token, user: result.user };
  }),

  me: authedProcedure.query(({ ctx }) => {
    const { sessionId: _sessionId, ...user } = ctx.user;
    return user;
  }),

  logout: authedProcedure.mutation(async ({ ctx }) => {
    if (ctx.token) await logout(ctx.db, ctx.token);
    if (ctx.req && ctx.res) clearSessionCookie(ctx.req, ctx.res, ctx.config);
    return { success: true };
  }),
});
