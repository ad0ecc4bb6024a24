/** The previews page's texts, in English and Korean. */
export const previewsEn = {
  "apps.previews": "Previews",
  "preview.title": "Preview environments",
  "preview.intro":
    "One preview per GitLab merge request: a build of its branch at <app>-mr-<n>, updated on each push and removed when the merge request closes.",
  "preview.empty": "No previews yet. Link a GitLab project (POST /v1/previews/links) and open a merge request.",
  "preview.mr": "Merge request",
  "preview.state": "State",
  "preview.url": "URL",
  "preview.commit": "Commit",
  "preview.pod": "Pod",
  "preview.links": "Linked projects",
  "preview.noLinks": "No GitLab project is linked.",
  "preview.webhook": "Webhook URL",
  "preview.state.building": "Building",
  "preview.state.deploying": "Deploying",
  "preview.state.running": "Running",
  "preview.state.failed": "Failed",
  "preview.state.removing": "Removing",
  "preview.state.removed": "Removed",
};

export const previewsKo: Record<keyof typeof previewsEn, string> = {
  "apps.previews": "미리보기",
  "preview.title": "미리보기 환경",
  "preview.intro":
    "GitLab 머지 리퀘스트마다 미리보기 하나: 브랜치를 빌드해 <app>-mr-<n> 주소로 띄우고, 푸시마다 갱신하며, 머지 리퀘스트가 닫히면 지웁니다.",
  "preview.empty":
    "아직 미리보기가 없습니다. GitLab 프로젝트를 연결(POST /v1/previews/links)하고 머지 리퀘스트를 여세요.",
  "preview.mr": "머지 리퀘스트",
  "preview.state": "상태",
  "preview.url": "주소",
  "preview.commit": "커밋",
  "preview.pod": "파드",
  "preview.links": "연결된 프로젝트",
  "preview.noLinks": "연결된 GitLab 프로젝트가 없습니다.",
  "preview.webhook": "웹훅 주소",
  "preview.state.building": "빌드 중",
  "preview.state.deploying": "배포 중",
  "preview.state.running": "실행 중",
  "preview.state.failed": "실패",
  "preview.state.removing": "삭제 중",
  "preview.state.removed": "삭제됨",
};
