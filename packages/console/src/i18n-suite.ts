/** Suite sign-in texts (the sign-in button, the notices, the landing and the setup wizard), in English and Korean. */
export const suiteEn = {
  "suite.button": "Sign in with the suite",
  "suite.or": "or",
  "suite.notice.suite_setup_pending":
    "Your company's setup is not finished yet. Sign in again once an admin has finished the setup wizard.",
  "suite.notice.suite_join_department":
    "Only staff of the departments your company chose can join. Ask an admin to add your department.",
  "suite.notice.suite_join_invite": "Only staff an admin invited can join. Ask an admin to invite your e-mail address.",
  "suite.notice.suite_not_linked":
    "Your company is not linked yet. Your suite enterprise admin signs in first; then try again.",
  "suite.notice.unknown": "The suite sign-in could not be finished. Try again.",
  "suite.landing": "Signing you in with the suite…",
  "suite.landingFailed": "The suite sign-in could not be finished.",
  "suite.backToSignin": "Back to sign-in",
  "suite.wizard": "Suite setup",
  "suite.wizardIntro":
    "Your organization is linked to the suite company {company}. Choose who may join, sync the departments, set the billing options, then finish. Until then only suite admins can sign in.",
  "suite.done": "The setup is finished: staff join by the policy below.",
  "suite.step.policy": "1. Join policy",
  "suite.policy.all": "All staff of the company",
  "suite.policy.departments": "Staff of chosen departments (and the departments under them)",
  "suite.policy.invite": "Only staff an admin invited by e-mail",
  "suite.units": "Suite department ids",
  "suite.unitsHint": "Comma-separated ids of the suite's departments (see the synced departments).",
  "suite.unitsRequired": "Enter at least one department id.",
  "suite.step.departments": "2. Departments",
  "suite.departmentsHint": "Departments mirror the suite's organization chart at every sign-in; sync now to see them.",
  "suite.sync": "Sync departments",
  "suite.synced": "Departments synced.",
  "suite.step.billing": "3. Billing",
  "suite.billingHint":
    "Usage of company assets is billed to each member's suite account. When a member's allowance is used up:",
  "suite.stopOnExhausted": "Pause their apps and stop their databases until the allowance is back",
  "suite.step.finish": "4. Finish",
  "suite.finishHint": "Staff can sign in with the suite once you finish.",
  "suite.finish": "Finish setup",
  "suite.setupLink": "Finish the suite setup",
};

export const suiteKo: Record<keyof typeof suiteEn, string> = {
  "suite.button": "스위트로 로그인",
  "suite.or": "또는",
  "suite.notice.suite_setup_pending":
    "회사 설정이 아직 끝나지 않았습니다. 관리자가 설정 마법사를 마친 뒤 다시 로그인하세요.",
  "suite.notice.suite_join_department":
    "회사가 고른 부서의 직원만 가입할 수 있습니다. 관리자에게 부서 추가를 요청하세요.",
  "suite.notice.suite_join_invite": "관리자가 초대한 직원만 가입할 수 있습니다. 관리자에게 이메일 초대를 요청하세요.",
  "suite.notice.suite_not_linked":
    "회사가 아직 연결되지 않았습니다. 스위트 전사 관리자가 먼저 로그인한 뒤 다시 시도하세요.",
  "suite.notice.unknown": "스위트 로그인을 마치지 못했습니다. 다시 시도하세요.",
  "suite.landing": "스위트로 로그인하는 중…",
  "suite.landingFailed": "스위트 로그인을 마치지 못했습니다.",
  "suite.backToSignin": "로그인으로 돌아가기",
  "suite.wizard": "스위트 설정",
  "suite.wizardIntro":
    "조직이 스위트 회사 {company}에 연결되었습니다. 가입 정책을 고르고 부서를 동기화하고 과금 옵션을 정한 뒤 마치세요. 그 전에는 스위트 관리자만 로그인할 수 있습니다.",
  "suite.done": "설정을 마쳤습니다. 직원은 아래 정책에 따라 가입합니다.",
  "suite.step.policy": "1. 가입 정책",
  "suite.policy.all": "회사의 모든 직원",
  "suite.policy.departments": "고른 부서(와 그 하위 부서)의 직원",
  "suite.policy.invite": "관리자가 이메일로 초대한 직원만",
  "suite.units": "스위트 부서 id",
  "suite.unitsHint": "스위트 부서 id를 쉼표로 구분해 입력하세요(동기화한 부서 참고).",
  "suite.unitsRequired": "부서 id를 하나 이상 입력하세요.",
  "suite.step.departments": "2. 부서",
  "suite.departmentsHint": "부서는 로그인할 때마다 스위트 조직도를 따라갑니다. 지금 동기화해 확인하세요.",
  "suite.sync": "부서 동기화",
  "suite.synced": "부서를 동기화했습니다.",
  "suite.step.billing": "3. 과금",
  "suite.billingHint": "회사 자산 사용량은 각 구성원의 스위트 계정으로 청구됩니다. 구성원의 한도가 소진되면:",
  "suite.stopOnExhausted": "한도가 돌아올 때까지 그 구성원의 앱을 멈추고 데이터베이스를 중지",
  "suite.step.finish": "4. 마치기",
  "suite.finishHint": "마치면 직원이 스위트로 로그인할 수 있습니다.",
  "suite.finish": "설정 마치기",
  "suite.setupLink": "스위트 설정 마치기",
};
