/* RouterTwin data-plane core: one include for everything. */
#ifndef DP_H
#define DP_H
#include "dp_cookie.h"
#include "dp_csum.h"
#include "dp_dns.h"
#include "dp_drop.h"
#include "dp_flow.h"
#include "dp_http.h"
#include "dp_lpm.h"
#include "dp_nat.h"
#include "dp_ops.h"
#include "dp_pkt.h"
#include "dp_ratelimit.h"
#include "dp_session.h"
#include "dp_splice.h"
#include "dp_syncookie.h"
#include "dp_tls.h"
#include "dp_health.h"
#include "dp_persist.h"
#include "dp_urlrule.h"
#include "dp_sched.h"
#endif
