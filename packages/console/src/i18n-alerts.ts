/** The alert rules page's texts, in English and Korean. */
export const alertsEn = {
  "alerts.tab": "Alerts",
  "alerts.title": "Alert rules",
  "alerts.intro":
    "Rules on your metrics: a rule fires once its condition has held for its time, resolves once it has been false as long, and tells you by mail and webhook (alert.fired, alert.resolved).",
  "alerts.empty": "No alert rules yet. Create one with POST /v1/alert-rules.",
  "alerts.name": "Rule",
  "alerts.condition": "Condition",
  "alerts.state": "State",
  "alerts.value": "Last value",
  "alerts.all": "all resources",
  "alerts.for": "for {n} min",
  "alerts.since": "since {when}",
  "alerts.disabled": "disabled",
  "alerts.state.ok": "OK",
  "alerts.state.pending": "Pending",
  "alerts.state.firing": "Firing",
};

export const alertsKo: Record<keyof typeof alertsEn, string> = {
  "alerts.tab": "경보",
  "alerts.title": "경보 규칙",
  "alerts.intro":
    "지표에 거는 규칙: 조건이 정한 시간 동안 이어지면 한 번 울리고, 그만큼 풀려 있으면 해제되며, 메일과 웹훅(alert.fired, alert.resolved)으로 알립니다.",
  "alerts.empty": "아직 경보 규칙이 없습니다. POST /v1/alert-rules로 만드세요.",
  "alerts.name": "규칙",
  "alerts.condition": "조건",
  "alerts.state": "상태",
  "alerts.value": "마지막 값",
  "alerts.all": "모든 리소스",
  "alerts.for": "{n}분 지속",
  "alerts.since": "{when}부터",
  "alerts.disabled": "꺼짐",
  "alerts.state.ok": "정상",
  "alerts.state.pending": "대기",
  "alerts.state.firing": "경보 중",
};
